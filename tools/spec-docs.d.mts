/** The document the docs page is built from: `doc` with an "Events" section on each stream operation. */
export declare function withStreamEvents<T extends Record<string, unknown>>(doc: T): T;
/** The document the docs page is built from, for webhooks: each webhook's payload `type` narrowed to its own name. */
export declare function withWebhookTypes<T extends Record<string, unknown>>(doc: T): T;
