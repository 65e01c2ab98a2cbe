// The files' section of the configuration (design, "Files on computers"): the limits of one transfer
// and of a computer's files, bounded by what the spec allows.
import { deref, kindBytes, listOperations, loadDocument, operationKinds, responseFor } from '@svc/contract';
import { type Env, int, oneOf } from '../../platform/config.js';

/** The limits of files on computers (design, "Files on computers"). */
export interface FilesConfig {
  /**
   * `SVC_FILES_MAX_BYTES` (default and most: the spec's `x-svc-max-bytes`, 1 GiB): the bytes one upload
   * (a file or an archive) may carry; more is 413 `payload_too_large`.
   */
  maxBytes: number;
  /** `SVC_FILES_QUOTA_BYTES` (default 10 GiB): the bytes of regular files under `/home` per computer (403 `quota_exceeded`). */
  quotaBytes: number;
  /** `SVC_FILES_MAX_ENTRIES` (default and most: the spec's 10,000): the entries one uploaded archive may hold. */
  maxEntries: number;
  /**
   * `SVC_FILES_HEAP_TUNING` (`on`, the default, or `off`): whether `svc-server` tunes V8's heap for
   * file traffic (a young collection every 8 MiB of file bytes moved, a larger heap growing factor).
   */
  heapTuning: boolean;
}

/** The files' section of the configuration. */
export interface FilesSection {
  /** Files on computers (`SVC_FILES_*`): the limits of one transfer and of a computer's files. */
  files: FilesConfig;
}

/**
 * The files' settings from `env`, within the spec's bounds.
 *
 * @example
 * filesSection({ SVC_FILES_MAX_ENTRIES: '7' }).files.maxEntries; // 7
 */
export function filesSection(env: Env): FilesSection {
  const bounds = filesBounds();
  return {
    files: Object.freeze({
      maxBytes: int(env, 'SVC_FILES_MAX_BYTES', bounds.maxBytes, 1, bounds.maxBytes),
      quotaBytes: int(env, 'SVC_FILES_QUOTA_BYTES', 10 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
      maxEntries: int(env, 'SVC_FILES_MAX_ENTRIES', bounds.maxEntries, 1, bounds.maxEntries),
      heapTuning: oneOf(env, 'SVC_FILES_HEAP_TUNING', ['on', 'off'] as const) === 'on',
    }),
  };
}

/** What the spec allows the files settings at most: its `x-svc-max-bytes`, and the entries of an archive. */
function filesBounds(): { maxBytes: number; maxEntries: number } {
  const document = loadDocument();
  const maxBytes = Math.max(
    ...[...operationKinds(document).values()].map((kind) => {
      const bytes = kindBytes(kind);
      return bytes?.direction === 'in' ? (bytes.body.maxBytes ?? 0) : 0;
    }),
  );
  const upload = listOperations(document).find((op) => op.operationId === 'uploadComputerArchive');
  type Props = { properties?: Record<string, object>; maximum?: unknown };
  const ok = upload && (responseFor(document, upload, 200)?.schema as Props | undefined);
  const archive = deref(document, ok?.properties?.archive ?? {}) as Props;
  const entries = deref(document, archive.properties?.entries ?? {}) as Props;
  return { maxBytes, maxEntries: Number(entries.maximum) };
}
