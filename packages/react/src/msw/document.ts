// The bundled document, imported as data so the handlers run in Node and in a browser (service worker)
// alike; `@svc/contract`'s `loadDocument` reads a file and is Node-only.
import type { OpenApiDocument } from '@svc/contract/browser';
import bundled from '@svc/contract/openapi.json' with { type: 'json' };

/** The v1 document the handlers answer from unless given another (`createMock({ document })`). */
export const BUNDLED_DOCUMENT = bundled as unknown as OpenApiDocument;
