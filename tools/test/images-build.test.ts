import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// `pnpm images:build` (tools/images/build.sh): the Debian image is content-addressed by its recipe, so a
// second build of the same recipe is skipped. The recipe's hash is checked without an Engine; the skip
// against the Engine that `pnpm images:build` filled (CI runs it before the tests).
const root = fileURLToPath(new URL('../..', import.meta.url));
const build = `${root}tools/images/build.sh`;
const debian = `${root}tools/images/debian.sh`;
const ci = process.env.CI === 'true';

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const started = Date.now();
  const result = spawnSync('bash', [script, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { ...result, ms: Date.now() - started };
}

const recipeHash = (env: Record<string, string> = {}) => run(debian, ['--recipe-hash'], env).stdout.trim();

describe('images:build, the Debian recipe', () => {
  test('the recipe hash is a SHA-256, the same every time, and changes with the package list', () => {
    const hash = recipeHash();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(recipeHash()).toBe(hash);
    expect(recipeHash({ SVC_DEBIAN_PACKAGES: 'python3,git,ca-certificates' })).toBe(hash);
    expect(recipeHash({ SVC_DEBIAN_PACKAGES: 'python3,git' })).not.toBe(hash);
    // Where the packages come from is not part of what the image is.
    expect(recipeHash({ SVC_DEBIAN_MIRROR: 'http://mirror.example.com/debian' })).toBe(hash);
  });

  test('an unknown image name is refused with the names it knows', () => {
    const result = run(build, ['ubuntu']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown image "ubuntu" (busybox, debian, desktop)');
  });
});

/** Whether the Engine has svc/debian:13 built from today's recipe: the premise of the skip test. */
function builtImage(): { id: string; recipe: string } | string {
  try {
    const [id, recipe] = execFileSync(
      'docker',
      ['image', 'inspect', '--format', '{{.Id}} {{index .Config.Labels "svc.recipe"}}', 'svc/debian:13'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 },
    )
      .trim()
      .split(' ');
    if (recipe !== recipeHash()) return 'svc/debian:13 is from another recipe (run pnpm images:build)';
    return { id: id!, recipe: recipe! };
  } catch (error) {
    return `no svc/debian:13 on a reachable Engine (${(error as Error).message.split('\n')[0]}; run pnpm images:build)`;
  }
}

const built = builtImage();
const skip = typeof built === 'string' && !ci;
if (skip)
  console.warn(`skipping "images:build skips a second build": ${built} (set CI=true to fail instead)`);

describe.skipIf(skip)('images:build against the Engine', () => {
  test('a second build of the same recipe is skipped: nothing fetched, the same image', () => {
    if (typeof built === 'string') throw new Error(`${built}; CI=true, so this fails instead of skipping`);
    const result = run(build, ['debian']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`svc/debian:13 is up to date (recipe ${built.recipe.slice(0, 16)}`);
    expect(result.stdout).toContain('build skipped');
    expect(result.stdout).not.toContain('bootstrapping');
    expect(result.ms).toBeLessThan(20_000); // a build fetches and unpacks for a minute or more
    expect(builtImage()).toEqual(built);
  });

  test('a mirror it cannot reach fails the build with the reason, and no image is made', () => {
    const tag = 'svc/debian-unreachable-test:13';
    const result = run(build, ['debian'], {
      SVC_DEBIAN_IMAGE: tag,
      SVC_DEBIAN_MIRROR: 'http://127.0.0.1:9/debian',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      process.getuid?.() === 0
        ? `debootstrap could not build Debian trixie from http://127.0.0.1:9/debian`
        : `building ${tag} needs root`,
    );
    expect(spawnSync('docker', ['image', 'inspect', tag]).status).not.toBe(0);
  });
});
