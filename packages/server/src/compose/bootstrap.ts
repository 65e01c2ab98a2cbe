import { randomBytes } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import type { KeyFile } from '../identity/auth/keypair.js';
import { generateServiceAccountKey, keyFile, writeKeyFile } from '../identity/auth/keypair.js';
import { hasPrincipals } from '../identity/repositories/principals.js';
import { setLocalAccount } from '../identity/signin/accounts.js';
import type { Database } from '../platform/db/database.js';
import { nestedDatabase } from '../platform/db/nested.js';
import { newId } from '../platform/ids.js';
import {
  addSeedMember,
  insertBootstrapServiceAccount,
  insertSeedKey,
  insertSeedWorkspace,
  lockFirstStart,
} from './repositories/seed.js';

/** What a first start created. The password and the key file are shown once, never again. */
export interface BootstrapResult {
  email: string;
  password: string;
  userId: string;
  workspaceId: string;
  workspaceName: string;
  serviceAccountId: string;
  keyFile: KeyFile;
  keyFilePath: string;
}

export interface BootstrapOptions {
  /** `base_url` of the key file: the real public address (with PORT=0, the bound port). */
  baseUrl: string;
  keyFilePath: string;
  email?: string;
  workspaceName?: string;
  /** Replace an existing key file (sandbox only: its in-memory database is new on every start). */
  overwriteKeyFile?: boolean;
}

/** Thrown when a first start would overwrite a key file that is already there. */
export class BootstrapError extends Error {
  override name = 'BootstrapError';
}

/**
 * First start on an EMPTY database (design §7): creates an owner user account (local sign-in, a
 * random password), a workspace, an owner service account and its key, and writes the key file
 * (mode 0600, never over an existing file). Under a transaction-scoped advisory lock, so two replicas
 * starting at once on one PostgreSQL bootstrap once: the second finds principals and does nothing.
 * Answers `undefined` when the database was not empty. The key file is written inside the
 * transaction, so a failure to write it leaves the database empty for the next try.
 *
 * @example
 * const first = await bootstrap(db, { baseUrl: config.baseUrl, keyFilePath: config.bootstrapKeyFile });
 * if (first) console.log(bootstrapMessage(first));
 */
export async function bootstrap(
  db: Database,
  options: BootstrapOptions,
): Promise<BootstrapResult | undefined> {
  const email = options.email ?? 'owner@svc.localhost';
  const workspaceName = options.workspaceName ?? 'default';
  return db.transaction(async (tx) => {
    await lockFirstStart(tx);
    if (await hasPrincipals(tx)) return undefined;
    const password = randomBytes(18).toString('base64url');
    const { principalId: userId } = await setLocalAccount(nestedDatabase(tx, db.engine), {
      email,
      password,
      name: 'owner',
      displayName: 'Owner',
    });
    const workspaceId = newId();
    await insertSeedWorkspace(tx, {
      id: workspaceId,
      name: workspaceName,
      displayName: 'Default workspace',
      createdBy: userId,
    });
    await addSeedMember(tx, workspaceId, userId, 'owner');
    const serviceAccountId = newId();
    await insertBootstrapServiceAccount(tx, { id: serviceAccountId, workspaceId });
    await addSeedMember(tx, workspaceId, serviceAccountId, 'owner');
    const pair = await generateServiceAccountKey('EdDSA');
    const keyId = newId();
    await insertSeedKey(tx, {
      id: keyId,
      principalId: serviceAccountId,
      algorithm: pair.algorithm,
      publicJwk: pair.publicJwk,
    });
    const file = keyFile({ keyId, principalId: serviceAccountId, baseUrl: options.baseUrl, pair });
    try {
      await writeKeyFile(options.keyFilePath, file, { exclusive: !options.overwriteKeyFile });
      // An overwritten file keeps its old mode: the key file is owner-only whatever was there before.
      await chmod(options.keyFilePath, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new BootstrapError(
          `the database is empty but ${options.keyFilePath} already exists; it belongs to another database. ` +
            'Move it away (or set SVC_BOOTSTRAP_KEY_FILE) and start again.',
        );
      throw error;
    }
    return {
      email,
      password,
      userId,
      workspaceId,
      workspaceName,
      serviceAccountId,
      keyFile: file,
      keyFilePath: options.keyFilePath,
    };
  });
}

/**
 * The one message that shows the first account's password: how to sign in and how to use the key.
 *
 * @example
 * process.stdout.write(bootstrapMessage(result));
 */
export function bootstrapMessage(result: BootstrapResult): string {
  return [
    '',
    'First start: created an owner account, workspace and service account.',
    `  workspace:        ${result.workspaceName} (${result.workspaceId})`,
    `  sign in (browser): svc login    email ${result.email}    password ${result.password}`,
    '                    (shown once: keep it now, it is stored only as a hash)',
    `  service account key file: ${result.keyFilePath} (mode 0600, shown nowhere else)`,
    `  get a token:      SVC_KEY_FILE=${result.keyFilePath} pnpm svc token`,
    '',
  ].join('\n');
}
