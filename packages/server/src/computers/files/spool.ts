import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WriteOptions } from './driver.js';
import { counted, nodeReadable } from './streams.js';

/**
 * A body of unknown length, written to a 0600 file in a fresh 0700 directory (the tar header needs
 * the size before the bytes), counted against `maxBytes` and the quota as it arrives. The caller
 * removes the directory.
 *
 * @example
 * const spool = await spoolBody(body, options, checkQuota);
 * try { await upload(createReadStream(spool.file), spool.size); } finally { await rm(spool.dir, { recursive: true, force: true }); }
 */
export async function spoolBody(
  body: ReadableStream<Uint8Array>,
  options: WriteOptions,
  checkQuota: (total: number) => void,
  spoolDir?: string,
): Promise<{ dir: string; file: string; size: number }> {
  const dir = await mkdtemp(join(spoolDir ?? tmpdir(), 'svc-files-'));
  const file = join(dir, 'body');
  try {
    const handle = await open(file, 'wx', 0o600);
    let size = 0;
    try {
      for await (const chunk of counted(nodeReadable(body), {
        maxBytes: options.maxBytes,
        signal: options.signal,
        onBytes: checkQuota,
      })) {
        await handle.write(chunk);
        size += chunk.length;
      }
    } finally {
      await handle.close();
    }
    return { dir, file, size };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
