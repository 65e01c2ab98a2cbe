import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { capacity as parseCapacity } from '../../computers/docker/config.js';
import { drainHost } from '../../fleet/drain.js';
import {
  deleteHost,
  hostByName,
  hostCapacity,
  hostContents,
  hostStatuses,
  insertHost,
  lockHost,
  setCordoned,
} from '../../fleet/repositories/hosts.js';
import { serverSecretKey } from '../../identity/auth/secret-key.js';
import type { Database } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import { HOST_KEYS, SecretBox } from '../../platform/secrets.js';
import { ConfigError, loadConfig } from '../config.js';
import { openServerDatabase } from '../database.js';

/** Where `svc-server hosts` reads and writes; `main.ts` passes the process's, tests their own. */
export interface HostsCommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** DATABASE_URL or SVC_DATA_DIR pick the database, as for the server itself. */
  env: Record<string, string | undefined>;
  /** An open database instead of the one `env` names (tests). */
  db?: Database;
}

/** The help of `svc-server hosts`. */
export const HOSTS_USAGE = `Usage: svc-server hosts <command> …

The fleet of Docker Engines that computers are placed on (an operator's command: it works on the
database directly, and no API principal can reach it). Every replica learns of a change within one
heartbeat (SVC_HOST_HEARTBEAT_MS); none restarts.

  hosts list [--json]                 each host: state, capacity, what it holds, labels
  hosts add <name> --engine unix:///path/to/docker.sock
            --capacity vcpus=<n>,memory_mib=<n>,computers=<n> [--label key=value]…
                                      registers a host; it takes computers after its first heartbeat
  hosts add <name> --engine https://<address>:2376 --tls-ca ca.pem --tls-cert cert.pem
            --tls-key key.pem --capacity …
                                      a remote Engine, over mutual TLS only (its --tlsverify); the
                                      client key file must be private (0600), and is stored sealed
                                      with the server's secret key (SVC_SECRET_KEY or its file)
  hosts cordon <name>                 no new computers or pooled containers on it; the rest runs on
  hosts uncordon <name>               takes computers again
  hosts drain <name> [--stop-running] [--start-after]
                                      cordons it, then moves each stopped computer to another host
                                      through an image of its files; running ones are refused and
                                      listed (--stop-running stops them first; --start-after starts
                                      the moved ones on their new host). Run it again to resume.
  hosts remove <name>                 forgets an empty host; refused while anything lives on it
`;

class UsageError extends Error {}

/** The box that seals remote Engines' client keys, under the server's secret key. */
function hostKeyBox(config: ReturnType<typeof loadConfig>): SecretBox {
  return new SecretBox(serverSecretKey(config), HOST_KEYS);
}

/**
 * A remote Engine's TLS material read from its files: the CA and certificate as they are, the key
 * sealed for host `id`. A key file that others may read is refused (it must be 0600 or stricter).
 */
function sealedTls(
  files: { ca: string; cert: string; key: string },
  id: string,
  config: ReturnType<typeof loadConfig>,
): { caPem: string; certPem: string; keySealed: string } {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new HostsError(
        `cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
  };
  const mode = (() => {
    try {
      return statSync(files.key).mode;
    } catch {
      return 0;
    }
  })();
  if ((mode & 0o077) !== 0)
    throw new HostsError(`the client key ${files.key} may be read by others (chmod 600 it first)`);
  const caPem = read(files.ca, 'CA certificate');
  const certPem = read(files.cert, 'client certificate');
  const key = read(files.key, 'client key');
  for (const [what, pem, label] of [
    ['--tls-ca', caPem, 'CERTIFICATE'],
    ['--tls-cert', certPem, 'CERTIFICATE'],
    ['--tls-key', key, 'PRIVATE KEY'],
  ] as const)
    if (!pem.includes(`-----BEGIN `) || !pem.includes(label))
      throw new HostsError(`${what} is not a PEM ${label.toLowerCase()}`);
  return { caPem, certPem, keySealed: hostKeyBox(config).seal(id, key).toString('base64') };
}

/**
 * `svc-server hosts …` against the configured database. Returns the exit code: 0 done, 1 refused (no
 * such host, not empty, a drain that left computers), 2 usage.
 *
 * @example
 * const code = await runHostsCommand(['cordon', 'dock-b'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runHostsCommand(argv: readonly string[], io: HostsCommandIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr.write(`svc-server hosts: ${(error as Error).message}\n\n${HOSTS_USAGE}`);
    return 2;
  }
  if (parsed.verb === 'help') {
    io.stdout.write(HOSTS_USAGE);
    return 0;
  }
  try {
    const config = loadConfig(io.env, { sandbox: false });
    const db = io.db ?? (await openServerDatabase(config));
    try {
      return await run(parsed, db, config, io);
    } finally {
      if (!io.db) await db.close();
    }
  } catch (error) {
    const known = error instanceof ConfigError || error instanceof HostsError;
    io.stderr.write(`svc-server hosts: ${known ? '' : 'failed: '}${(error as Error).message}\n`);
    return 1;
  }
}

/** A refusal the operator can act on: printed as is, exit 1. */
export class HostsError extends Error {}

type Parsed =
  | { verb: 'help' }
  | { verb: 'list'; json: boolean }
  | {
      verb: 'add';
      name: string;
      engine: string;
      capacity: { vcpus: number; memory_mib: number; computers: number };
      labels: Record<string, string>;
      tls?: { ca: string; cert: string; key: string };
    }
  | { verb: 'cordon' | 'uncordon' | 'remove'; name: string }
  | { verb: 'drain'; name: string; stopRunning: boolean; startAfter: boolean };

function parse(argv: readonly string[]): Parsed {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      engine: { type: 'string' },
      'tls-ca': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      capacity: { type: 'string' },
      label: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      'stop-running': { type: 'boolean' },
      'start-after': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help) return { verb: 'help' };
  const [verb, name, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`);
  if (verb === 'list') {
    if (name) throw new UsageError(`unexpected argument: ${name}`);
    return { verb, json: values.json === true };
  }
  if (!verb) throw new UsageError('missing command');
  if (!['add', 'cordon', 'uncordon', 'remove', 'drain'].includes(verb))
    throw new UsageError(`unknown command: hosts ${verb}`);
  if (!name) throw new UsageError('missing <name>');
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name))
    throw new UsageError(
      `<name> must be a DNS label (lowercase letters, digits and '-'), got ${JSON.stringify(name)}`,
    );
  if (verb === 'add') {
    const engine = values.engine;
    if (!engine) throw new UsageError('missing --engine unix:///path/to/docker.sock');
    const tlsFiles = [values['tls-ca'], values['tls-cert'], values['tls-key']];
    let tls: { ca: string; cert: string; key: string } | undefined;
    if (/^unix:\/\/\/[^\0]+$/.test(engine)) {
      if (tlsFiles.some((file) => file !== undefined))
        throw new UsageError('--tls-ca, --tls-cert and --tls-key are for an https:// Engine only');
    } else if (/^https:\/\/[^/?#\s]+$/.test(engine) && URL.canParse(engine)) {
      const [ca, cert, key] = tlsFiles;
      if (!ca || !cert || !key)
        throw new UsageError(
          'a remote Engine needs --tls-ca, --tls-cert and --tls-key (mutual TLS; never plain TCP)',
        );
      tls = { ca, cert, key };
    } else
      throw new UsageError(
        `--engine must be unix:///path/to/docker.sock, or https://<address>:<port> with mutual TLS (never plain tcp:// or http://), got ${JSON.stringify(engine)}`,
      );
    let capacity: ReturnType<typeof parseCapacity>;
    try {
      capacity = parseCapacity(values.capacity, '--capacity');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const { vcpus, memory_mib, computers } = capacity;
    if (vcpus === undefined || memory_mib === undefined || computers === undefined)
      throw new UsageError(
        '--capacity must give vcpus, memory_mib and computers, e.g. vcpus=16,memory_mib=65536,computers=200',
      );
    const labels: Record<string, string> = {};
    for (const label of values.label ?? []) {
      const match = /^([a-z0-9][a-z0-9._-]{0,62})=([A-Za-z0-9._-]{0,63})$/.exec(label);
      if (!match)
        throw new UsageError(
          `--label must be key=value (a DNS-like key, a short value), got ${JSON.stringify(label)}`,
        );
      labels[match[1] as string] = match[2] as string;
    }
    return {
      verb,
      name,
      engine,
      capacity: { vcpus, memory_mib, computers },
      labels,
      ...(tls ? { tls } : {}),
    };
  }
  if (verb === 'drain')
    return {
      verb,
      name,
      stopRunning: values['stop-running'] === true,
      startAfter: values['start-after'] === true,
    };
  return { verb: verb as 'cordon' | 'uncordon' | 'remove', name };
}

async function run(
  parsed: Exclude<Parsed, { verb: 'help' }>,
  db: Database,
  config: ReturnType<typeof loadConfig>,
  io: HostsCommandIo,
): Promise<number> {
  switch (parsed.verb) {
    case 'list': {
      const hosts = await hostStatuses(db, config.fleet.unhealthyAfterMs);
      if (parsed.json) {
        io.stdout.write(
          `${JSON.stringify(
            hosts.map((host) => ({
              name: host.name,
              engine: host.engine,
              state: host.state,
              labels: host.labels,
              capacity: hostCapacity(host),
              used: host.used,
              seen_at: host.seen_at?.toISOString() ?? null,
            })),
            null,
            2,
          )}\n`,
        );
        return 0;
      }
      const rows = [['NAME', 'STATE', 'VCPUS', 'MEMORY_MIB', 'COMPUTERS', 'LABELS', 'ENGINE']];
      for (const host of hosts)
        rows.push([
          host.name,
          host.state,
          `${host.used.vcpus}/${host.capacity_vcpus}`,
          `${host.used.memory_mib}/${host.capacity_memory_mib}`,
          `${host.used.computers}/${host.capacity_computers}`,
          Object.entries(host.labels)
            .map(([key, value]) => `${key}=${value}`)
            .join(',') || '-',
          host.engine,
        ]);
      const widths =
        rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
      for (const row of rows)
        io.stdout.write(
          `${row
            .map((cell, column) => cell.padEnd(widths[column] ?? 0))
            .join('  ')
            .trimEnd()}\n`,
        );
      return 0;
    }
    case 'add': {
      const existing = await hostByName(db, parsed.name);
      if (existing) throw new HostsError(`a host named ${parsed.name} exists already (${existing.engine})`);
      const id = newId();
      const host = await insertHost(db, {
        id,
        name: parsed.name,
        engine: parsed.engine,
        capacity: parsed.capacity,
        labels: parsed.labels,
        ...(parsed.tls ? { tls: sealedTls(parsed.tls, id, config) } : {}),
      });
      io.stdout.write(
        `Registered host ${host.name} (${host.engine}); it takes computers once a replica's heartbeat reaches its Engine.\n`,
      );
      return 0;
    }
    case 'cordon':
    case 'uncordon': {
      if (!(await setCordoned(db, parsed.name, parsed.verb === 'cordon')))
        throw new HostsError(`no host named ${parsed.name}`);
      io.stdout.write(
        parsed.verb === 'cordon'
          ? `Cordoned ${parsed.name}: no new computers or pooled containers land there.\n`
          : `Uncordoned ${parsed.name}: it takes computers again.\n`,
      );
      return 0;
    }
    case 'remove': {
      const host = await hostByName(db, parsed.name);
      if (!host) throw new HostsError(`no host named ${parsed.name}`);
      return db.transaction(async (tx) => {
        await lockHost(tx, host.id);
        const held = await hostContents(tx, host.id);
        if (held.computers + held.pooled + held.snapshots > 0)
          throw new HostsError(
            `host ${parsed.name} still holds ${held.computers} computers, ${held.pooled} pooled containers and ${held.snapshots} snapshots: cordon and drain it first (svc-server hosts drain ${parsed.name})`,
          );
        await deleteHost(tx, host.id);
        io.stdout.write(`Removed host ${parsed.name}.\n`);
        return 0;
      });
    }
    case 'drain': {
      const host = await hostByName(db, parsed.name);
      if (!host) throw new HostsError(`no host named ${parsed.name}`);
      const report = await drainHost(db, host, config, {
        ...(host.tls_key_sealed ? { box: hostKeyBox(config) } : {}),
        stopRunning: parsed.stopRunning,
        startAfter: parsed.startAfter,
        progress: (line: string) => io.stdout.write(`${line}\n`),
      });
      io.stdout.write(
        `Drained ${parsed.name}: ${report.moved.length} moved, ${report.refused.length} refused, ${report.left} computers left on it.\n`,
      );
      for (const refused of report.refused)
        io.stdout.write(`  refused ${refused.name} (${refused.id}): ${refused.reason}\n`);
      return report.left === 0 ? 0 : 1;
    }
  }
}
