// `svc … | head -1`: the reader closes the pipe before svc has written everything.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN } from './support/mcp-client.js';

if (!existsSync(BIN) && process.env.CI) throw new Error(`cannot run under CI: ${BIN} is not built`);

describe.skipIf(!existsSync(BIN))('svc writing to a pipe its reader has closed', () => {
  it('ends quietly with 141, as a Unix tool ended by SIGPIPE does, and no stack trace', () => {
    // `true` exits at once, so svc's first write meets a closed pipe.
    const script = `"${process.execPath}" "${BIN}" completion bash | true; echo "status \${PIPESTATUS[0]}" >&2`;
    const result = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
    expect(result.stderr.trim()).toBe('status 141');
  });

  it('the same command to an open pipe writes all and succeeds', () => {
    const result = spawnSync(process.execPath, [BIN, 'completion', 'bash'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('svc');
  });
});
