/** A byte operation of the bundle, as the mock's front answers it (mock-bytes.mjs). */
export interface MockByteOperation {
  operationId: string;
  method: string;
  path: RegExp;
  kind: 'upload' | 'download';
  mediaType: string;
  maxBytes: number | undefined;
  headers: Record<string, unknown>;
  examples: Record<string, unknown>;
}
export declare const MOCK_FILE: string;
export declare const MOCK_MTIME: number;
export declare const PLACEHOLDER: Buffer;
export declare function mockArchive(): Buffer;
export declare function mockBytes(operation: MockByteOperation, example?: string): Buffer;
export declare function byteOperations(doc: Record<string, unknown>): MockByteOperation[];
export declare function downloadHeaders(operation: MockByteOperation, body: Buffer): Record<string, string>;
