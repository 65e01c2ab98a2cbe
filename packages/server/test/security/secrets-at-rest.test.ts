// #13 item 1: secrets at rest. Everything the server writes that holds a secret is 0600 in 0700
// directories whatever the umask (the server is started with umask 000); a data directory or key file
// that others can read or write stops the start; and the signing keys in the database are sealed
// under a key that is not in the database, so a reader of the database alone holds no usable key.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactDecrypt, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/compose/config.js';
import { migrateServerDatabase } from '../../src/compose/database.js';
import type { Database } from '../../src/platform/db/database.js';
import { openPglite } from '../../src/platform/db/pglite.js';
import { newId } from '../../src/platform/ids.js';
import { createClusterDatabase } from '../cluster/processes.js';
import { describeEngines } from '../support/databases.js';
import { startServer } from './support/server-process.js';

const BASE_URL = 'http://svc.test/v1';
const secretKey = () => randomBytes(32).toString('base64url');

/** Every path under `root` (itself included) with its permission bits. */
function modes(root: string): { path: string; dir: boolean; mode: number }[] {
  const found: { path: string; dir: boolean; mode: number }[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    found.push({ path, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return found;
}

// Real processes: PGlite's WASM start-up and the bootstrap's scrypt take seconds on a busy machine.
describe('files the server writes hold secrets: 0600 files in 0700 directories under umask 000', {
  timeout: 90_000,
}, () => {
  const root = join(tmpdir(), `svc-secrets-${process.pid}-${randomBytes(4).toString('hex')}`);
  beforeAll(() => mkdirSync(root, { mode: 0o700 }));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('PGlite: the data directory, the secret key file and the bootstrap key file', async () => {
    const home = join(root, 'pglite');
    const started = await startServer(
      {
        SVC_DATA_DIR: join(home, 'data'),
        SVC_BOOTSTRAP_KEY_FILE: join(home, 'keys', 'bootstrap-key.json'),
      },
      { umask000: true },
    );
    const loose = () =>
      modes(home)
        .filter((f) => f.path !== home && f.mode !== (f.dir ? 0o700 : 0o600))
        .map((f) => `${f.path.slice(home.length)} ${f.mode.toString(8)}`);
    let whileRunning: string[];
    try {
      expect(started.output()).toMatch(/svc-server listening on/);
      whileRunning = loose();
    } finally {
      // Then stopped: PGlite writes more on the way out (a checkpoint), and those files count too.
      await started.stop();
    }
    expect(whileRunning).toEqual([]);
    expect(loose()).toEqual([]);
    const all = modes(home);
    expect(all.some((f) => f.path === join(home, 'secret-key'))).toBe(true);
    expect(all.some((f) => f.path === join(home, 'keys', 'bootstrap-key.json'))).toBe(true);
    expect(all.filter((f) => f.path.startsWith(join(home, 'data')) && !f.dir).length).toBeGreaterThan(100);
  });

  test('PostgreSQL: the secret key file and the bootstrap key file', async (ctx) => {
    const probe = inject('postgres');
    if (!probe.reachable) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL not reachable at ${probe.url}`);
      ctx.skip();
    }
    const database = await createClusterDatabase(probe.url);
    const home = join(root, 'postgres');
    try {
      const started = await startServer(
        {
          DATABASE_URL: database.url,
          SVC_SECRET_KEY_FILE: join(home, 'state', 'secret-key'),
          SVC_BOOTSTRAP_KEY_FILE: join(home, 'keys', 'bootstrap-key.json'),
        },
        { umask000: true },
      );
      await started.stop();
      expect(started.output()).toMatch(/svc-server listening on/);
      const all = modes(home).filter((f) => f.path !== home);
      expect(all.map((f) => f.path.slice(home.length)).sort()).toEqual([
        '/keys',
        '/keys/bootstrap-key.json',
        '/state',
        '/state/secret-key',
      ]);
      expect(all.filter((f) => f.mode !== (f.dir ? 0o700 : 0o600))).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  test.each([
    ['a data directory others can read', 'data', 0o755],
    ['a data directory others can write', 'data', 0o773],
    ['a secret key file others can read', 'secret-key', 0o644],
  ])('refuses to start on %s, with a clear message', async (_name, what, mode) => {
    const home = join(root, `refuse-${newId()}`);
    const dataDir = join(home, 'data');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (what === 'secret-key') {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(join(home, 'secret-key'), `${secretKey()}\n`);
    }
    chmodSync(join(home, what), mode);
    const started = await startServer(
      {
        SVC_DATA_DIR: dataDir,
        SVC_BOOTSTRAP_KEY_FILE: join(home, 'bootstrap-key.json'),
      },
      { umask000: true },
    );
    await started.stop();
    expect(started.output()).toContain('svc-server could not start');
    expect(started.output()).toContain(join(home, what));
    expect(started.output()).toMatch(/other users can read or write/);
    expect(started.output()).toMatch(/chmod/);
    expect(started.exitCode).toBe(1);
    // Nothing was bootstrapped on the way.
    expect(existsSync(join(home, 'bootstrap-key.json'))).toBe(false);
  });
});

/** The private JWK of the active signing key, unsealed with the secret key (as only the server can). */
async function unsealed(db: Database, key: string): Promise<{ kid: string; jwk: Record<string, string> }> {
  const { rows } = await db.query<{ id: string; private_jwe: string }>(
    `SELECT id, private_jwe FROM server_signing_keys WHERE state = 'active'`,
  );
  const opened = await compactDecrypt(rows[0]?.private_jwe as string, Buffer.from(key, 'base64url'));
  return { kid: rows[0]?.id as string, jwk: JSON.parse(new TextDecoder().decode(opened.plaintext)) };
}

/** Every row of every table of the database, as JSON text: what a reader of the database sees. */
async function dumpDatabase(db: Database): Promise<string> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
  );
  const parts: string[] = [];
  for (const { table_name } of rows) {
    const dump = await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
    parts.push(...dump.rows.map((r) => r.row));
  }
  return parts.join('\n');
}

describeEngines('signing keys are sealed at rest', (engine) => {
  let db: Database;
  const key = secretKey();
  const config = (env: Record<string, string> = {}) =>
    loadConfig(
      { SVC_BASE_URL: BASE_URL, SVC_RATE_LIMITS: 'off', SVC_SECRET_KEY: key, ...env },
      { sandbox: true },
    );

  beforeAll(async () => {
    db = await engine.open();
  });

  test('a reader of the database alone finds no private key, and the sealed one opens only with the secret key', async () => {
    const app = await createApp({ config: config(), db });
    const signing = await app.deps.serverKeys.signingKey();
    const { jwk: privateJwk } = await unsealed(db, key);
    const token = await app.deps.tokens.issue(newId());
    await app.close();

    const dump = await dumpDatabase(db);
    expect(dump).toContain(signing.kid);
    expect(dump).not.toContain(privateJwk.d as string);
    expect(dump).not.toMatch(/"d"\s*:/);
    const { rows } = await db.query<{ private_jwk: unknown; private_jwe: string }>(
      'SELECT private_jwk, private_jwe FROM server_signing_keys',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.private_jwk).toBeNull();
    // Without the secret key, the sealed key does not open (a key the reader might try instead).
    await expect(compactDecrypt(rows[0]?.private_jwe as string, randomBytes(32))).rejects.toThrow();
    // With it, it is the key that signed the token.
    const publicKey = await importJWK({ ...privateJwk, d: undefined }, 'EdDSA');
    await expect(jwtVerify(token.access_token, publicKey)).resolves.toBeDefined();
  });

  test('a replica with another secret key refuses to start, naming SVC_SECRET_KEY', async () => {
    await expect(createApp({ config: config({ SVC_SECRET_KEY: secretKey() }), db })).rejects.toThrow(
      /sealed with another secret key.*SVC_SECRET_KEY/,
    );
  });

  // A fresh PGlite of its own (WASM start-up and migrations): seconds, more on a busy machine.
  test('plaintext keys of older versions are sealed on start and keep signing', {
    timeout: 60_000,
  }, async () => {
    const old = await engine.open();
    const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = newId();
    const privateJwk = await exportJWK(privateKey);
    await old.query(
      `INSERT INTO server_signing_keys (id, algorithm, public_jwk, private_jwk) VALUES ($1, 'EdDSA', $2, $3)`,
      [kid, await exportJWK(publicKey), privateJwk],
    );
    const app = await createApp({ config: config(), db: old });
    const token = await app.deps.tokens.issue(newId());
    await app.close();
    expect(
      JSON.parse(Buffer.from(token.access_token.split('.')[0] as string, 'base64url').toString()).kid,
    ).toBe(kid);
    await expect(jwtVerify(token.access_token, publicKey)).resolves.toBeDefined();
    expect(await dumpDatabase(old)).not.toContain(privateJwk.d as string);
  });
});

describe('the PGlite files hold no private key', { timeout: 60_000 }, () => {
  test('the signing key does not appear in any file of the data directory', async () => {
    const key = secretKey();
    const home = join(tmpdir(), `svc-pgfiles-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const dataDir = join(home, 'data');
      const db = await openPglite(dataDir);
      await migrateServerDatabase(db);
      const app = await createApp({
        config: loadConfig(
          { SVC_BASE_URL: BASE_URL, SVC_RATE_LIMITS: 'off', SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: key },
          { sandbox: false },
        ),
        db,
      });
      await app.deps.tokens.issue(newId());
      const d = (await unsealed(db, key)).jwk.d as string;
      await app.close();
      await db.close();
      const raw = Buffer.from(d, 'base64url');
      for (const file of modes(dataDir).filter((f) => !f.dir)) {
        const bytes = readFileSync(file.path);
        expect(bytes.includes(d), file.path).toBe(false);
        expect(bytes.includes(raw), file.path).toBe(false);
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
