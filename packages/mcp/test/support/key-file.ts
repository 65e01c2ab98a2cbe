import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway Ed25519 service-account key file (mode 0600) pointing at `baseUrl`. */
export function writeKeyFile(baseUrl: string): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const path = join(mkdtempSync(join(tmpdir(), 'svc-mcp-')), 'key.json');
  const keyFile = {
    type: 'service_account_key',
    key_id: '01m6jnq0g2vnkpw89anfsv2mhwp',
    principal_id: '01m6b5cjm082dkpt9sxm0exnk3h',
    algorithm: 'EdDSA',
    private_key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    base_url: baseUrl,
  };
  writeFileSync(path, JSON.stringify(keyFile), { mode: 0o600 });
  return path;
}
