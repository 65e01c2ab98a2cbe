// Interactive terminals (issue #43) against the built server (`dist/main.js`, SVC_DRIVER=docker), each
// beside the Engine API's own attached TTY exec (create with `Tty: true`, start hijacked over the unix
// socket), in one run:
//   (a) a keystroke's round trip: one byte written, its echo read back. Through the API: POST …/input,
//       then the `output` event that carries it on the open stream; on the Engine: a byte on the
//       hijacked socket, its echo on the same socket. Same program both ways (the image's shell). In
//       turn with both, a bare node:http POST of one byte: the least any keystroke sent as an HTTP
//       request adds to the Engine's echo (the floor row).
//   (b) `cat` of a 10 MiB file in a shell, timed from the typed line to the terminal's end (`; exit`),
//       through the terminal's output stream vs the Engine's socket; bytes received are counted.
//   (c) many open terminals on one replica: the server's RSS before and after, per terminal.
// Rate limits count as shipped but with quotas no run reaches (every keystroke is a request). The
// terminal quotas are raised by env for (c) (SVC_TERMINALS_PER_COMPUTER / _PER_WORKSPACE), the
// terminals spread over `--computers` computers. Needs `pnpm build` and `pnpm images:build`.
//
//   node packages/server/bench/terminals.mjs [--samples 100] [--warmup 10] [--image busybox]
//     [--file-mib 10] [--terminals 200] [--computers 4] [--socket /var/run/docker.sock]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopChild } from '@svc/tools/child-process';
import { dockerClient } from '../dist/compose/docker.js';
import { engine as engineAt, removeInstance } from './engine.mjs';
import { api, bootstrapToken, quantile, startServer } from './server.mjs';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '10' },
    image: { type: 'string', default: 'busybox' },
    'file-mib': { type: 'string', default: '10' },
    terminals: { type: 'string', default: '200' },
    computers: { type: 'string', default: '4' },
    socket: { type: 'string', default: process.env.SVC_DOCKER_SOCKET || '/var/run/docker.sock' },
  },
});
const SAMPLES = Number(values.samples);
const WARMUP = Number(values.warmup);
const IMAGE = values.image;
const FILE_BYTES = Number(values['file-mib']) * 1024 * 1024;
const TERMINALS = Number(values.terminals);
const COMPUTERS = Number(values.computers);
const SOCKET = values.socket;
const INSTANCE = `bench-term-${process.pid}`;
const SHELL = IMAGE.startsWith('busybox') ? ['/bin/sh'] : ['/bin/bash'];
/** 127 characters and a newline a line: the file is text, as `cat` of a log would be. */
const LINE = `${'0123456789abcdef'.repeat(8).slice(0, 127)}`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (ms) => Math.round(ms * 10) / 10;
const sorted = (list) => [...list].sort((a, b) => a - b);

/** One JSON request to the Engine (bench/engine.mjs), on Node's default agent. */
const engine = (method, path, body) => engineAt(SOCKET, undefined, method, path, body);

/**
 * The Engine's own TTY exec of `cmd`, attached: a hijacked socket carrying the PTY both ways.
 * Answers { socket, received() (bytes so far, latin1), ended (a promise) }.
 */
async function engineTty(container, cmd) {
  const created = await engine('POST', `/containers/${container}/exec`, {
    Cmd: cmd,
    Env: ['TERM=xterm-256color'],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
  });
  if (created.status !== 201)
    throw new Error(`exec create: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.Id;
  const socket = await new Promise((resolve, reject) => {
    const payload = JSON.stringify({ Detach: false, Tty: true });
    const req = http.request({
      socketPath: SOCKET,
      method: 'POST',
      path: `/exec/${id}/start`,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
        connection: 'Upgrade',
        upgrade: 'tcp',
      },
    });
    req.on('upgrade', (_res, socket, head) => {
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.on('response', (res) => reject(new Error(`exec start: ${res.statusCode}`)));
    req.on('error', reject);
    req.end(payload);
  });
  await engine('POST', `/exec/${id}/resize?h=24&w=80`);
  let text = '';
  let bytes = 0;
  socket.on('data', (chunk) => {
    bytes += chunk.length;
    if (text.length < 1 << 16) text += chunk.toString('latin1');
    else text = (text + chunk.toString('latin1')).slice(-4096);
  });
  const ended = new Promise((resolve) => {
    socket.once('close', resolve);
    socket.once('end', resolve);
  });
  return { socket, text: () => text, bytes: () => bytes, ended };
}

/**
 * Follows a terminal's output stream. `text()` is the tail of what came (latin1), `bytes()` its size,
 * `exit` resolves with the `exit` event's data.
 */
async function follow(base, token, path) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}/output`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`output stream: ${res.status} ${await res.text()}`);
  let text = '';
  let bytes = 0;
  let lastOffset = 0;
  let gaps = 0;
  let onEvent = () => {};
  let exited;
  let failed;
  const exit = new Promise((resolve, reject) => {
    exited = resolve;
    failed = reject;
  });
  exit.catch(() => {});
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trimStart();
        }
        if (event === 'output') {
          const chunk = JSON.parse(data);
          const raw =
            chunk.encoding === 'base64' ? Buffer.from(chunk.data, 'base64') : Buffer.from(chunk.data, 'utf8');
          if (chunk.offset !== lastOffset) gaps += 1;
          lastOffset = chunk.offset + raw.length;
          bytes += raw.length;
          if (text.length < 1 << 16) text += raw.toString('latin1');
          else text = (text + raw.toString('latin1')).slice(-4096);
          onEvent();
        } else if (event === 'exit') exited(JSON.parse(data));
        else if (event === 'stream.ended') failed(new Error(`the output stream ended: ${data}`));
      }
    }
  })().catch(() => {});
  return {
    text: () => text,
    bytes: () => bytes,
    gaps: () => gaps,
    exit,
    /** Resolves at the next output event. */
    next: () =>
      new Promise((resolve) => {
        onEvent = () => {
          onEvent = () => {};
          resolve();
        };
      }),
    close: () => controller.abort(),
  };
}

async function until(what, ms = 10_000, extra) {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${extra ? `: ${JSON.stringify(extra())}` : ''}`);
    await sleep(5);
  }
}

/** RSS of a process, in MiB (from /proc). */
function rssMib(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-term-'));
  const keyFile = join(dir, 'bootstrap-key.json');
  const docker = dockerClient(SOCKET);
  const perComputer = Math.ceil(TERMINALS / COMPUTERS) + 2;
  let server;
  const computers = [];
  try {
    server = await startServer({
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_KEY_FILE: keyFile,
      SVC_DRIVER: 'docker',
      SVC_DOCKER_SOCKET: SOCKET,
      SVC_DOCKER_INSTANCE: INSTANCE,
      SVC_RATE_LIMITS: 'principal=1000000000/60,workspace_mutations=1000000000/60',
      SVC_TERMINALS_PER_COMPUTER: String(perComputer),
      SVC_TERMINALS_PER_WORKSPACE: String(perComputer * COMPUTERS),
      SVC_STREAMS_PER_PRINCIPAL: '64',
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
      // SVC_TERMINAL_FLUSH_MS, SVC_TERMINAL_KEEP_BYTES … of this environment, to try other settings.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('SVC_TERMINAL_'))),
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    });
    const base = server.url;
    const token = await bootstrapToken(base, keyFile);
    const ws = await api(base, token, 'POST', '/v1/workspaces', { name: `bench-term-${process.pid}` });
    if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${JSON.stringify(ws.body)}`);
    const wsPath = `/v1/workspaces/${ws.body.workspace.id}`;
    for (let i = 0; i < COMPUTERS; i++) {
      const created = await api(base, token, 'POST', `${wsPath}/computers`, {
        name: `bench-${i}`,
        size: 'small',
        image: IMAGE,
      });
      if (created.status !== 202)
        throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
      computers.push(created.body.computer.id);
      const op = await api(base, token, 'GET', `/v1/operations/${created.body.operations[0].id}?wait=60`);
      if (op.body.operation.state !== 'succeeded') throw new Error(`create: ${JSON.stringify(op.body)}`);
    }
    const container = `svc-${INSTANCE}-${computers[0]}`;
    const terminalsPath = (computer = computers[0]) => `${wsPath}/computers/${computer}/terminals`;
    const openTerminal = async (body, computer) => {
      const res = await api(base, token, 'POST', terminalsPath(computer), { cols: 80, rows: 24, ...body });
      if (res.status !== 201) throw new Error(`open terminal: ${res.status} ${JSON.stringify(res.body)}`);
      return `${terminalsPath(computer)}/${res.body.terminal.id}`;
    };
    const type = async (path, bytes) => {
      const res = await fetch(`${base}${path}/input`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      if (res.status !== 204) throw new Error(`input: ${res.status} ${await res.text()}`);
    };
    const rssBefore = rssMib(server.child.pid);

    // (a) a keystroke's round trip, interleaved: one API sample, one Engine sample, in turn.
    console.error('terminals: (a) keystrokes');
    const apiTerminal = await openTerminal({ command: SHELL });
    const apiStream = await follow(base, token, apiTerminal);
    await until(
      () => /[$#] /.test(apiStream.text()),
      10_000,
      () => apiStream.text(),
    );
    const bare = await engineTty(container, SHELL);
    await until(
      () => /[$#] /.test(bare.text()),
      10_000,
      () => [bare.text(), bare.bytes()],
    );
    await sleep(300); // the shells' first redraws (a resize, a cursor query) are not echoes
    // The floor of any HTTP request: a bare node:http server answering a POST of one byte with 204,
    // asked the same way (fetch, same headers), in turn with the other two.
    const bareHttp = http.createServer((req, res) => {
      req.on('error', () => {});
      req.resume();
      req.on('end', () => {
        res.writeHead(204);
        res.end();
      });
    });
    await new Promise((resolve) => bareHttp.listen(0, '127.0.0.1', resolve));
    const bareUrl = `http://127.0.0.1:${bareHttp.address().port}/input`;
    const keystroke = { api: [], engine: [], post: [] };
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      if (i % 40 === 39) {
        // A line of 40 a's is killed (Ctrl-U) so no line wraps; outside the timing.
        await type(apiTerminal, Uint8Array.of(0x15));
        bare.socket.write(Uint8Array.of(0x15));
        await sleep(30);
      }
      let seen = apiStream.bytes();
      const next = apiStream.next();
      let started = performance.now();
      await type(apiTerminal, 'a');
      await next;
      await until(() => apiStream.bytes() > seen);
      if (i >= WARMUP) keystroke.api.push(performance.now() - started);
      await sleep(10);
      seen = bare.bytes();
      started = performance.now();
      bare.socket.write('a');
      while (bare.bytes() === seen) await new Promise((resolve) => setImmediate(resolve));
      if (i >= WARMUP) keystroke.engine.push(performance.now() - started);
      await sleep(10);
      started = performance.now();
      const posted = await fetch(bareUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: 'a',
      });
      await posted.arrayBuffer();
      if (i >= WARMUP) keystroke.post.push(performance.now() - started);
      await sleep(10);
    }
    bareHttp.close();
    bare.socket.end('exit\r');
    apiStream.close();
    await api(base, token, 'DELETE', apiTerminal);

    // (b) `cat` of a file of FILE_BYTES, Engine first then the API, then again in the other order.
    console.error('terminals: (b) cat');
    const made = await engineTty(container, [
      '/bin/sh',
      '-c',
      `yes ${LINE} | head -c ${FILE_BYTES} > /tmp/bench-cat; stat -c %s /tmp/bench-cat`,
    ]);
    await made.ended;
    if (!made.text().includes(String(FILE_BYTES))) throw new Error(`file: ${made.text()}`);
    const expected = FILE_BYTES + FILE_BYTES / (LINE.length + 1); // each \n is \r\n on the PTY (onlcr)
    const cat = { api: [], engine: [], apiBytes: [], engineBytes: [], gaps: 0 };
    const line = 'cat /tmp/bench-cat; exit\r';
    for (let run = 0; run < 4; run++) {
      const engineFirst = run % 2 === 0;
      for (const way of engineFirst ? ['engine', 'api'] : ['api', 'engine']) {
        if (way === 'engine') {
          const tty = await engineTty(container, SHELL);
          await until(() => /[$#] /.test(tty.text()));
          const before = tty.bytes();
          const started = performance.now();
          tty.socket.write(line);
          await tty.ended;
          cat.engine.push(performance.now() - started);
          cat.engineBytes.push(tty.bytes() - before);
        } else {
          const path = await openTerminal({ command: SHELL });
          const stream = await follow(base, token, path);
          await until(() => /[$#] /.test(stream.text()));
          const before = stream.bytes();
          const started = performance.now();
          await type(path, line);
          await stream.exit;
          cat.api.push(performance.now() - started);
          cat.apiBytes.push(stream.bytes() - before);
          cat.gaps += stream.gaps();
          stream.close();
        }
        await sleep(200);
      }
    }

    // (c) TERMINALS open terminals, spread over the computers, each with its shell's prompt written.
    console.error('terminals: (c) open terminals');
    await sleep(1000);
    const rssIdle = rssMib(server.child.pid);
    const opened = [];
    const started = performance.now();
    for (let i = 0; i < TERMINALS; i += 8) {
      const batch = [];
      for (let j = i; j < Math.min(TERMINALS, i + 8); j++)
        batch.push(openTerminal({ command: SHELL }, computers[j % COMPUTERS]));
      opened.push(...(await Promise.all(batch)));
    }
    const openMs = performance.now() - started;
    await sleep(3000);
    const rssOpen = rssMib(server.child.pid);
    const screen = await api(base, token, 'GET', `${opened.at(-1)}/screen`);
    const prompt = screen.body?.screen?.lines?.find((l) => l.trim() !== '') ?? '';

    // The table.
    const stat = (list) => {
      const s = sorted(list);
      return { p50: quantile(s, 0.5), p99: quantile(s, 0.99) };
    };
    const ka = stat(keystroke.api);
    const ke = stat(keystroke.engine);
    const kp = stat(keystroke.post);
    const ca = stat(cat.api).p50;
    const ce = stat(cat.engine).p50;
    const mibps = (bytes, ms) => bytes / 1024 / 1024 / (ms / 1000);
    const apiRate = mibps(expected, ca);
    const engineRate = mibps(expected, ce);
    const perTerminalKib = ((rssOpen - rssIdle) * 1024) / TERMINALS;
    const out = [];
    out.push(
      `terminals on the Docker driver (${IMAGE}, ${SHELL.join(' ')}), ${SAMPLES} keystrokes each way (after ${WARMUP}), interleaved`,
    );
    out.push('| measure | through the API | Engine TTY exec | ratio | target | met |');
    out.push('|---|---|---|---|---|---|');
    out.push(
      `| keystroke echo p50 | ${round(ka.p50)} ms | ${round(ke.p50)} ms | ×${(ka.p50 / ke.p50).toFixed(2)} | ≤ 30 ms, ≤ ×1.5 | ${ka.p50 <= 30 && ka.p50 / ke.p50 <= 1.5 ? 'yes' : 'no'} |`,
    );
    out.push(
      `| floor: Engine echo + a bare node:http POST of one byte (${round(kp.p50)} ms), p50 | ${round(ke.p50 + kp.p50)} ms | ${round(ke.p50)} ms | ×${((ke.p50 + kp.p50) / ke.p50).toFixed(2)} | — | — |`,
    );
    out.push(
      `| keystroke echo p99 | ${round(ka.p99)} ms | ${round(ke.p99)} ms | ×${(ka.p99 / ke.p99).toFixed(2)} | — | — |`,
    );
    out.push(
      `| cat ${values['file-mib']} MiB, p50 of ${cat.api.length} | ${round(ca)} ms (${apiRate.toFixed(1)} MiB/s) | ${round(ce)} ms (${engineRate.toFixed(1)} MiB/s) | ×${(apiRate / engineRate).toFixed(2)} throughput | ≥ ×0.5 | ${apiRate / engineRate >= 0.5 ? 'yes' : 'no'} |`,
    );
    out.push(
      `| bytes received by cat (expected ${expected}) | ${cat.apiBytes.join(', ')} (${cat.gaps} gaps) | ${cat.engineBytes.join(', ')} | — | all | ${cat.apiBytes.every((b) => b >= expected) ? 'yes' : 'no'} |`,
    );
    out.push(
      `| ${TERMINALS} open terminals over ${COMPUTERS} computers: server RSS | ${round(rssIdle)} → ${round(rssOpen)} MiB (+${round(rssOpen - rssIdle)}) | — | ${perTerminalKib.toFixed(0)} KiB a terminal | — | — |`,
    );
    out.push(
      `server RSS at start ${round(rssBefore)} MiB; ${TERMINALS} opens took ${round(openMs)} ms (8 at a time); last terminal's screen, first line written: ${JSON.stringify(prompt)}`,
    );
    out.push(
      `quotas for (c): SVC_TERMINALS_PER_COMPUTER=${perComputer}, SVC_TERMINALS_PER_WORKSPACE=${perComputer * COMPUTERS}`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    if (server) await stopChild(server.child, { killAfterMs: 10_000 });
    await removeInstance(docker, INSTANCE);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
