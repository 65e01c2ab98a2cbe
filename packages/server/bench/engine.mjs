// The Engine API as a small script calls it, over a kept-alive unix socket: the baselines the benches
// put beside the API's figures (a container made and started with the driver's options, an exec).
import http from 'node:http';

export const IMAGE = 'svc/busybox:1';

/** One request to the Engine over `agent`; answers { status, body } (body parsed when JSON). */
export function engine(socket, agent, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        socketPath: socket,
        agent,
        method,
        path,
        headers: payload
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : {},
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          const json = res.headers['content-type']?.includes('json') && text ? JSON.parse(text) : text;
          resolve({ status: res.statusCode, body: json, raw });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function expectStatus(answer, statuses, what) {
  if (!statuses.includes(answer.status))
    throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** The Engine's own exec of `echo hi`: create, start attached (output to its end), inspect. */
export async function bareExec(socket, agent, container) {
  const created = await engine(socket, agent, 'POST', `/containers/${container}/exec`, {
    Cmd: ['echo', 'hi'],
    AttachStdout: true,
    AttachStderr: true,
  });
  expectStatus(created, [201], 'exec create');
  const started = await engine(socket, agent, 'POST', `/exec/${created.body.Id}/start`, {
    Detach: false,
    Tty: false,
  });
  expectStatus(started, [200], 'exec start');
  if (!started.raw.subarray(8).toString().startsWith('hi')) throw new Error(`exec output: ${started.raw}`);
  const inspected = await engine(socket, agent, 'GET', `/exec/${created.body.Id}/json`);
  if (inspected.body.ExitCode !== 0) throw new Error(`exec exit: ${JSON.stringify(inspected.body)}`);
}

/** Creates (not starts) container `name` of {@link IMAGE} with the driver's options for a `small` computer. */
export async function createBareContainer(socket, agent, name, instance) {
  const created = await engine(socket, agent, 'POST', `/containers/create?name=${name}`, {
    Image: IMAGE,
    Hostname: 'bench',
    User: '1000:1000',
    Labels: { 'svc.managed': 'true', 'svc.instance': instance },
    NetworkDisabled: true,
    HostConfig: {
      Memory: 4096 * 1024 * 1024,
      MemorySwap: 4096 * 1024 * 1024,
      NanoCpus: 1e9,
      PidsLimit: 512,
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m' },
      Mounts: [{ Type: 'volume', Source: '', Target: '/home' }],
      Init: true,
      IpcMode: 'private',
    },
  });
  expectStatus(created, [201], 'container create');
}

/**
 * Removes every container the server of `instance` left (its computers, and its pool's ready ones,
 * which outlive a server on purpose), with their volumes, by id. Errors are the bench's end: ignored.
 *
 * @example
 * await removeInstance(dockerClient(socket), `bench-exec-${process.pid}`);
 */
export async function removeInstance(docker, instance) {
  // Listed again after each pass: a removal the Engine refused (one already under way, the stopping
  // server's) or a container made meanwhile is taken by the next pass; five passes at most.
  for (let pass = 0; pass < 5; pass++) {
    const left = await docker
      .listContainers({ all: true, filters: { label: [`svc.instance=${instance}`] } })
      .catch(() => []);
    if (left.length === 0) return;
    if (pass > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const container of left)
      await docker
        .getContainer(container.Id)
        .remove({ force: true, v: true })
        .catch(() => {});
  }
}
