// The ESM entry's types: the same declarations as index.d.ts (the CommonJS entry's), so both
// module systems see one API.
export * from './index.js';
