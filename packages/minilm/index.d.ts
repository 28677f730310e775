/** The folder holding `model.bin` and `vocab.txt`. */
export declare const modelDir: string;
/** The encoder's identity, e.g. `all-MiniLM-L6-v2/int8-1-fabbf766`; the engine reports the same. */
export declare const modelId: string;
/** SHA-256 (hex) of `model.bin`. */
export declare const sha256: string;
