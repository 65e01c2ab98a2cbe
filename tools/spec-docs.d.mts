/** The document the docs page is built from: `doc` with an "Events" section on each stream operation. */
export declare function withStreamEvents<T extends Record<string, unknown>>(doc: T): T;
