// The tools the spec should yield, derived from the spec through @svc/contract alone (not from the
// code under test): one per operation but the two without an access token; a byte operation on a file
// is a text tool named for what it does to the content (`read_…`, `write_…`), a tar archive's none,
// a terminal's input (`send_…`) a tool that takes keys as text. Each in its toolset: `terminals` for one on a computer's terminals, `streams`
// for an operation answering Server-Sent Events, `files` for one on the path of a file's bytes or
// beneath it, `screens` for a screen's picture and the `input` beside it, else its first tag. A stream
// of pictures (the live screen) is none: it is for people to watch.
import {
  byteOperationIds,
  byteRequestBody,
  byteResponse,
  eventStream,
  isStreamOperation,
  listOperations,
  loadDocument,
  type OpenApiDocument,
  type OperationInfo,
} from '@svc/contract';
import { toolName } from '../../src/names.js';

/** Operations that take no access token, so no tool. */
export const NOT_TOOLS = ['getHealth', 'exchangeToken'];

/** The toolsets `tools/list` holds when a client names none (README: "Toolsets"). */
export const DEFAULT_SETS = ['identity', 'computers', 'files', 'operations', 'streams', 'catalog'];

const FILE = 'application/octet-stream';

const isFile = (document: OpenApiDocument, op: OperationInfo) =>
  byteResponse(document, op)?.mediaType === FILE || byteRequestBody(document, op)?.mediaType === FILE;

/** The expected tools of the document, in spec order, with their tag and toolset. */
export function expectedTools(
  document: OpenApiDocument = loadDocument(),
): { name: string; tag: string; toolset: string; operationId: string; hintsFrom?: string }[] {
  const bytes = new Set(byteOperationIds(document));
  const operations = listOperations(document);
  const fileRoots = operations.filter((op) => isFile(document, op)).map((op) => op.path);
  const screens = operations
    .filter((op) => byteResponse(document, op)?.mediaType === 'image/png')
    .flatMap((op) => [op.path, op.path.replace(/\/[^/]+$/, '/input')]);
  // A stream of pictures (its events' data has an image field: the live screen) is for people, no tool.
  const schemas = (document.components?.schemas ?? {}) as Record<string, { properties?: object }>;
  const pictures = (op: OperationInfo) =>
    isStreamOperation(document, op) &&
    (eventStream(document, op)?.events ?? []).some((e) =>
      JSON.stringify(schemas[e.dataSchema]?.properties ?? {}).includes('"contentMediaType":"image/'),
    );
  return operations
    .filter((op) => !NOT_TOOLS.includes(op.operationId) && !pictures(op))
    .flatMap((op) => {
      const name = toolName(op.operationId);
      const tag = (op.operation.tags as string[])[0] as string;
      const toolset = /\/terminals(\/|$)/.test(op.path)
        ? 'terminals'
        : isStreamOperation(document, op)
          ? 'streams'
          : fileRoots.some((root) => op.path === root || op.path.startsWith(`${root}/`))
            ? 'files'
            : screens.includes(op.path)
              ? 'screens'
              : tag;
      const tool = { name, tag, toolset, operationId: op.operationId };
      if (!bytes.has(op.operationId)) return [tool];
      // The screenshot is the screen tool's, with the computer-use actions over it and the input,
      // whose hints it has (a click may change anything).
      if (byteResponse(document, op)?.mediaType === 'image/png') {
        const input = operations.find(
          (o) => o.method === 'post' && o.path === op.path.replace(/\/[^/]+$/, '/input'),
        );
        return [{ ...tool, name: 'use_computer_screen', hintsFrom: input?.operationId as string }];
      }
      // A terminal's input (`send…`) is bytes but no file: a keys tool of its own name.
      if (toolset === 'terminals' && name.startsWith('send_')) return [tool];
      return isFile(document, op) && /^(download|upload)_/.test(name)
        ? [{ ...tool, name: name.replace(/^download_/, 'read_').replace(/^upload_/, 'write_') }]
        : [];
    });
}

/** The expected tools of the default toolsets. */
export function defaultTools(document: OpenApiDocument = loadDocument()) {
  return expectedTools(document).filter((tool) => DEFAULT_SETS.includes(tool.toolset));
}
