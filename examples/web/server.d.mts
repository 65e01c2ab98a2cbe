/** Serves the page on 127.0.0.1 (port 0: a free one). */
export function startServer(port?: number): Promise<{ url: string; close: () => Promise<void> }>;
