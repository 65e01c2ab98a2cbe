import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { CUSTOM_VERBS, OPERATION_VERBS } from './lib/verbs.js';
import { lint, RULESET } from './spectral.js';

// The operation verbs live in one list, rules/lib/verbs.js, read by both linters: Redocly's
// svc/operation-id-verb (rules/redocly-plugin.js) and Spectral's svc-custom-action. These fixtures are
// generated from that list, and the last case edits a copy of the list and shows both linters follow it.

const SPEC = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/valid.yaml', import.meta.url));
const START = '/workspaces/{workspace}/computers/{computer}/start';

// biome-ignore lint/suspicious/noExplicitAny: a test document is mutated freely.
type Doc = Record<string, any>;
const base = (): Doc => parse(readFileSync(FIXTURE, 'utf8'));

/** Scratch space under spec/node_modules: ignored by git, and packages resolve from there. */
const scratch = mkdtempSync(path.join(SPEC, 'node_modules', '.tmp-verbs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The valid fixture with the `start` action renamed to `verb` (path segment and operationId). */
function withAction(verb: string): Doc {
  const doc = base();
  const route = START.replace(/start$/, verb);
  const item: Doc = doc.paths[START];
  delete doc.paths[START];
  doc.paths[route] = item;
  item.post.operationId = `${verb}Computer`;
  return doc;
}

/** svc-custom-action findings for a document, under a ruleset (by default rules/spectral.yaml). */
async function customActionFindings(doc: Doc, ruleset = RULESET): Promise<string[]> {
  const findings = await lint(doc, path.join(scratch, 'doc.json'), ruleset);
  return findings.filter((f) => f.code === 'svc-custom-action').map((f) => f.message);
}

/** A minimal document with one POST per operationId. */
function withOperationIds(ids: string[]): Doc {
  const paths: Doc = {};
  ids.forEach((operationId, i) => {
    paths[`/things-${i}`] = { post: { operationId, responses: { '204': { description: 'Done.' } } } };
  });
  return { openapi: '3.1.0', info: { title: 'Verbs', version: '1.0.0' }, paths };
}

/** The operationIds `redocly lint` (with a redocly.yaml, by default spec's) reports under svc/operation-id-verb. */
function redoclyRefused(doc: Doc, config = path.join(SPEC, 'redocly.yaml')): Promise<string[]> {
  const file = mkdtempSync(path.join(scratch, 'redocly-'));
  writeFileSync(path.join(file, 'openapi.yaml'), stringify(doc));
  return new Promise((resolve, reject) => {
    execFile(
      path.join(SPEC, 'node_modules/.bin/redocly'),
      ['lint', path.join(file, 'openapi.yaml'), '--config', config, '--format', 'json'],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      (_error, stdout, stderr) => {
        if (stdout.trim() === '') return reject(new Error(`redocly printed nothing: ${stderr}`));
        const { problems } = JSON.parse(stdout) as {
          problems: { ruleId: string; location: { pointer: string }[] }[];
        };
        resolve(
          problems
            .filter((p) => p.ruleId === 'svc/operation-id-verb')
            .map((p) => {
              const [, route] = /^#\/paths\/([^/]+)\//.exec(p.location[0]?.pointer ?? '') ?? [];
              return doc.paths[String(route).replaceAll('~1', '/')]?.post?.operationId;
            }),
        );
      },
    );
  });
}

describe('Spectral svc-custom-action reads rules/lib/verbs.js', () => {
  it.each(CUSTOM_VERBS.map((verb) => [verb]))('accepts the listed verb `%s` as an action', async (verb) => {
    expect(await customActionFindings(withAction(verb))).toEqual([]);
  });

  it('refuses a verb that is not listed', async () => {
    expect(await customActionFindings(withAction('reboot'))).toHaveLength(1);
  });
});

describe('Redocly svc/operation-id-verb reads rules/lib/verbs.js', () => {
  it('accepts an operationId with every listed verb', async () => {
    expect(await redoclyRefused(withOperationIds(OPERATION_VERBS.map((verb) => `${verb}Things`)))).toEqual(
      [],
    );
  });

  it('refuses an unlisted verb, an UpperCamelCase and a snake_case operationId', async () => {
    const refused = ['rebootComputer', 'StartComputer', 'start_computer'];
    expect((await redoclyRefused(withOperationIds(['listThings', ...refused]))).sort()).toEqual(
      refused.sort(),
    );
  });
});

describe('one list: a verb added to a copy of rules/lib/verbs.js is accepted by both linters of that copy', () => {
  // A copy of the linters' configuration (redocly.yaml, the Spectral ruleset and its code), where the
  // list of verbs has one more custom verb, `resize`. Nothing else in the copy changes.
  const copy = mkdtempSync(path.join(scratch, 'copy-'));
  cpSync(path.join(SPEC, 'redocly.yaml'), path.join(copy, 'redocly.yaml'));
  cpSync(path.join(SPEC, 'rules'), path.join(copy, 'rules'), {
    recursive: true,
    filter: (source) => !/\.test\.ts$|[/\\]fixtures([/\\]|$)/.test(source),
  });
  const verbs = path.join(copy, 'rules/lib/verbs.js');
  const original = readFileSync(verbs, 'utf8');
  // The list's last entry gets a neighbour: `…, 'exchange']` → `…, 'exchange', 'resize']`.
  const edited = original.replace("'exchange']", "'exchange', 'resize']");
  writeFileSync(verbs, edited);

  it('the copy differs from the original in the list only', () => {
    expect(edited).not.toBe(original);
    expect(CUSTOM_VERBS).not.toContain('resize');
  });

  it('Spectral: `POST .../{computer}/resize` is refused by the ruleset, accepted by the copy', async () => {
    expect(await customActionFindings(withAction('resize'))).toHaveLength(1);
    expect(await customActionFindings(withAction('resize'), path.join(copy, 'rules/spectral.yaml'))).toEqual(
      [],
    );
  });

  it('Redocly: `resizeComputer` is refused by redocly.yaml, accepted by the copy', async () => {
    const doc = withOperationIds(['resizeComputer']);
    expect(await redoclyRefused(doc)).toEqual(['resizeComputer']);
    expect(await redoclyRefused(doc, path.join(copy, 'redocly.yaml'))).toEqual([]);
  });
});
