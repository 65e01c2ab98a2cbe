import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { STANDARD_VERBS } from './lib/verbs.js';
import { lint, RULESET } from './spectral.js';

// An operationId starts with a standard verb (rules/lib/verbs.js) or with the verb of the custom action
// its operation declares, `x-svc.action` in the spec. Both linters read that declaration: Redocly's
// svc/operation-id-verb (rules/redocly-plugin.js) on the sources, Spectral's svc-custom-action on the
// bundle. A new custom action is accepted by both once it is declared beside its operation, and by
// neither before: no list in rules/ names it.

const SPEC = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/valid.yaml', import.meta.url));
const START = '/workspaces/{workspace}/computers/{computer}/start';

// biome-ignore lint/suspicious/noExplicitAny: a test document is mutated freely.
type Doc = Record<string, any>;
const base = (): Doc => parse(readFileSync(FIXTURE, 'utf8'));

/** Scratch space under spec/node_modules: ignored by git, and packages resolve from there. */
const scratch = mkdtempSync(path.join(SPEC, 'node_modules', '.tmp-verbs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * The valid fixture with the `start` action renamed to `verb` (path segment and operationId), declaring
 * `declared` as its action (by default the same verb; `null`: no action declared).
 */
function withAction(verb: string, declared: string | null = verb): Doc {
  const doc = base();
  const route = START.replace(/start$/, verb);
  const item: Doc = doc.paths[START];
  delete doc.paths[START];
  doc.paths[route] = item;
  item.post.operationId = `${verb}Computer`;
  if (declared === null) delete item.post['x-svc'].action;
  else item.post['x-svc'].action = declared;
  return doc;
}

/** svc-custom-action findings for a document. */
async function customActionFindings(doc: Doc): Promise<string[]> {
  const findings = await lint(doc, path.join(scratch, 'doc.json'), RULESET);
  return findings.filter((f) => f.code === 'svc-custom-action').map((f) => f.message);
}

/** A minimal document with one POST per operationId, each declaring `action` when given. */
function withOperationIds(ids: string[], action?: string): Doc {
  const paths: Doc = {};
  ids.forEach((operationId, i) => {
    paths[`/things-${i}`] = {
      post: {
        operationId,
        ...(action ? { 'x-svc': { permission: 'principal', action } } : {}),
        responses: { '204': { description: 'Done.' } },
      },
    };
  });
  return { openapi: '3.1.0', info: { title: 'Verbs', version: '1.0.0' }, paths };
}

/** The operationIds `redocly lint` (with spec's redocly.yaml) reports under svc/operation-id-verb. */
async function redoclyRefused(doc: Doc): Promise<string[]> {
  return (await redoclyProblems(doc, 'svc/operation-id-verb')).map((pointer) => {
    const [, route, method] = /^#\/paths\/([^/]+)\/([a-z]+)\//.exec(pointer) ?? [];
    return doc.paths[String(route).replaceAll('~1', '/')]?.[String(method)]?.operationId;
  });
}

/** The pointers of what `redocly lint` (with spec's redocly.yaml) reports under `rule`. */
function redoclyProblems(doc: Doc, rule: string): Promise<string[]> {
  const file = mkdtempSync(path.join(scratch, 'redocly-'));
  writeFileSync(path.join(file, 'openapi.yaml'), stringify(doc));
  return new Promise((resolve, reject) => {
    execFile(
      path.join(SPEC, 'node_modules/.bin/redocly'),
      [
        'lint',
        path.join(file, 'openapi.yaml'),
        '--config',
        path.join(SPEC, 'redocly.yaml'),
        '--format',
        'json',
      ],
      { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      (_error, stdout, stderr) => {
        if (stdout.trim() === '') return reject(new Error(`redocly printed nothing: ${stderr}`));
        const { problems } = JSON.parse(stdout) as {
          problems: { ruleId: string; location: { pointer: string }[] }[];
        };
        resolve(problems.filter((p) => p.ruleId === rule).map((p) => p.location[0]?.pointer ?? ''));
      },
    );
  });
}

describe('Spectral svc-custom-action reads x-svc.action', () => {
  it.each([['start'], ['resize'], ['hibernate']])(
    'accepts the declared verb `%s` as an action',
    async (verb) => {
      expect(await customActionFindings(withAction(verb))).toEqual([]);
    },
  );

  it('refuses an action segment whose operation declares no verb, or another one', async () => {
    expect(await customActionFindings(withAction('resize', null))).toHaveLength(1);
    expect(await customActionFindings(withAction('resize', 'reboot'))).toHaveLength(1);
  });
});

describe('Redocly svc/operation-id-verb reads rules/lib/verbs.js and x-svc.action', () => {
  it('accepts an operationId with every standard verb', async () => {
    expect(await redoclyRefused(withOperationIds(STANDARD_VERBS.map((verb) => `${verb}Things`)))).toEqual([]);
  });

  it('refuses an undeclared verb, an UpperCamelCase and a snake_case operationId', async () => {
    const refused = ['rebootComputer', 'StartComputer', 'start_computer'];
    expect((await redoclyRefused(withOperationIds(['listThings', ...refused]))).sort()).toEqual(
      refused.sort(),
    );
  });
});

describe('one place: a new custom action is declared beside its operation, and both linters follow', () => {
  it('Spectral: `POST .../{computer}/resize` is refused until it declares `action: resize`', async () => {
    expect(await customActionFindings(withAction('resize', null))).toHaveLength(1);
    expect(await customActionFindings(withAction('resize'))).toEqual([]);
  });

  it('Redocly: `resizeComputer` is refused until its operation declares `action: resize`', async () => {
    expect(await redoclyRefused(withOperationIds(['resizeComputer']))).toEqual(['resizeComputer']);
    expect(await redoclyRefused(withOperationIds(['resizeComputer'], 'resize'))).toEqual([]);
    expect(await redoclyRefused(withOperationIds(['resizeComputer'], 'reboot'))).toEqual(['resizeComputer']);
  });
});

/** A minimal document with one GET per operationId, its 200 answering `types` (each with an empty body). */
function withGets(ids: string[], types: string[] = ['text/event-stream'], status = '200'): Doc {
  const paths: Doc = {};
  ids.forEach((operationId, i) => {
    const content = Object.fromEntries(types.map((type) => [type, { schema: { type: 'array' } }]));
    paths[`/things-${i}`] = {
      get: { operationId, responses: { [status]: { description: 'Events.', content } } },
    };
  });
  return { openapi: '3.1.0', info: { title: 'Streams', version: '1.0.0' }, paths };
}

describe('stream operations: `stream` is their verb, and only theirs', () => {
  it('Redocly accepts `stream…` on a GET whose 200 answers text/event-stream, and nothing else there', async () => {
    expect(await redoclyRefused(withGets(['streamThings', 'getThings', 'listThings']))).toEqual([
      'getThings',
      'listThings',
    ]);
  });

  it('Redocly refuses `stream…` on an operation that is no stream, even one declaring `action: stream`', async () => {
    expect(await redoclyRefused(withGets(['streamThings'], ['application/json']))).toEqual(['streamThings']);
    expect(await redoclyRefused(withOperationIds(['streamThings'], 'stream'))).toEqual(['streamThings']);
  });
});

describe('Redocly svc/response-mime-type: JSON, and text/event-stream for the 200 of a GET only', () => {
  it.each([
    ['the 200 of a GET', withGets(['streamThings']), []],
    ['JSON', withGets(['getThings'], ['application/json']), []],
    [
      'another status',
      withGets(['getThings'], ['text/event-stream'], '404'),
      ['#/paths/~1things-0/get/responses/404/content/text~1event-stream'],
    ],
    [
      'another type',
      withGets(['getThings'], ['text/plain']),
      ['#/paths/~1things-0/get/responses/200/content/text~1plain'],
    ],
  ])('%s', async (_name, doc, refused) => {
    expect(await redoclyProblems(doc, 'svc/response-mime-type')).toEqual(refused);
  });

  it('refuses text/event-stream on a POST', async () => {
    const doc = withOperationIds(['createThings']);
    doc.paths['/things-0'].post.responses = {
      '200': { description: 'Events.', content: { 'text/event-stream': { schema: { type: 'array' } } } },
    };
    expect(await redoclyProblems(doc, 'svc/response-mime-type')).toEqual([
      '#/paths/~1things-0/post/responses/200/content/text~1event-stream',
    ]);
  });
});

const OCTETS = 'application/octet-stream';
const TAR = 'application/x-tar';

/** A minimal document with one PUT per operationId, its request body of `type` (bytes by default). */
function withPuts(ids: string[], type = OCTETS, method = 'put'): Doc {
  const paths: Doc = {};
  ids.forEach((operationId, i) => {
    paths[`/things-${i}`] = {
      [method]: {
        operationId,
        requestBody: { content: { [type]: { schema: { type: 'string', format: 'binary' } } } },
        responses: { '204': { description: 'Done.' } },
      },
    };
  });
  return { openapi: '3.1.0', info: { title: 'Bytes', version: '1.0.0' }, paths };
}

describe('byte operations: `upload` and `download` are their verbs, and only theirs', () => {
  it('Redocly accepts `upload…` on an operation taking bytes, and nothing else there', async () => {
    expect(await redoclyRefused(withPuts(['uploadThing', 'updateThing', 'createThing']))).toEqual([
      'updateThing',
      'createThing',
    ]);
    expect(await redoclyRefused(withPuts(['uploadThing'], TAR))).toEqual([]);
  });

  it('Redocly accepts `download…` on a GET whose 200 is bytes, and nothing else there', async () => {
    expect(await redoclyRefused(withGets(['downloadThing', 'getThing'], [OCTETS]))).toEqual(['getThing']);
    expect(await redoclyRefused(withGets(['downloadThing'], [TAR]))).toEqual([]);
  });

  it('Redocly refuses `upload…` and `download…` where no bytes are, even declared as an action', async () => {
    expect(await redoclyRefused(withGets(['downloadThing'], ['application/json']))).toEqual([
      'downloadThing',
    ]);
    expect(await redoclyRefused(withPuts(['uploadThing'], 'application/json'))).toEqual(['uploadThing']);
    expect(await redoclyRefused(withOperationIds(['uploadThing'], 'upload'))).toEqual(['uploadThing']);
  });

  it('Spectral svc-custom-action refuses a custom action declaring a byte verb', async () => {
    expect(await customActionFindings(withAction('upload'))).toHaveLength(1);
    expect(await customActionFindings(withAction('download'))).toHaveLength(1);
  });
});

describe('Redocly svc/request-mime-type and svc/response-mime-type: bytes where a byte body is, only there', () => {
  it.each([
    ['an upload (PUT) of a file', withPuts(['uploadThing']), []],
    ['an upload (PUT) of a tar archive', withPuts(['uploadThing'], TAR), []],
    ['JSON', withPuts(['updateThing'], 'application/json'), []],
    ['bytes on a POST (a send)', withPuts(['sendThing'], OCTETS, 'post'), []],
    [
      'bytes on a PATCH',
      withPuts(['uploadThing'], OCTETS, 'patch'),
      ['#/paths/~1things-0/patch/requestBody/content/application~1octet-stream'],
    ],
    [
      'another type',
      withPuts(['updateThing'], 'text/plain'),
      ['#/paths/~1things-0/put/requestBody/content/text~1plain'],
    ],
  ])('request body: %s', async (_name, doc, refused) => {
    expect(await redoclyProblems(doc, 'svc/request-mime-type')).toEqual(refused);
  });

  it.each([
    ['the 200 of a GET, a file', withGets(['downloadThing'], [OCTETS]), []],
    ['the 200 of a GET, an archive', withGets(['downloadThing'], [TAR]), []],
    [
      'an error status',
      withGets(['downloadThing'], [OCTETS], '404'),
      ['#/paths/~1things-0/get/responses/404/content/application~1octet-stream'],
    ],
  ])('response: %s', async (_name, doc, refused) => {
    expect(await redoclyProblems(doc, 'svc/response-mime-type')).toEqual(refused);
  });
});

/** A minimal document with one webhook per event type, each with the operationId `ids[i]`. */
function withWebhooks(names: string[], ids: string[]): Doc {
  const webhooks: Doc = {};
  names.forEach((name, i) => {
    webhooks[name] = { post: { operationId: ids[i], responses: { '2XX': { description: 'Received.' } } } };
  });
  return { openapi: '3.1.0', info: { title: 'Webhooks', version: '1.0.0' }, paths: {}, webhooks };
}

describe('webhooks: named by event types, their operationIds by them (rules/lib/webhooks.js)', () => {
  it('Redocly accepts the camelCased event type + Webhook, and refuses anything else', async () => {
    const doc = withWebhooks(
      ['service_account.created', 'computer.deleted', 'key.updated'],
      ['serviceAccountCreatedWebhook', 'deleteComputer', 'keyUpdated'],
    );
    const refused = await redoclyProblems(doc, 'svc/operation-id-verb');
    expect(refused.sort()).toEqual([
      '#/webhooks/computer.deleted/post/operationId',
      '#/webhooks/key.updated/post/operationId',
    ]);
  });

  it('webhook names are no paths: svc/paths-kebab-case checks `paths` only, and still refuses a path', async () => {
    const doc = withWebhooks(['service_account.created'], ['serviceAccountCreatedWebhook']);
    doc.paths['/service_accounts'] = {
      get: { operationId: 'listServiceAccounts', responses: { '200': { description: 'Ok.' } } },
    };
    expect(await redoclyProblems(doc, 'svc/paths-kebab-case')).toEqual(['#/paths/~1service_accounts']);
    expect(await redoclyProblems(doc, 'paths-kebab-case')).toEqual([]);
  });
});
