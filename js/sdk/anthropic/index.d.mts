// The ESM entry's types: the same declarations as the CommonJS entry's.
export * from './index.cjs';
