import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Finding, lint } from './spectral.js';

// Each case breaks the valid fixture in one way and names the one svc-* rule that must fire, and the
// JSON path where it must fire. Paths are where Spectral reports, i.e. where the broken value is
// written: a finding inside a $ref'd component is reported at the component. Spectral reports array
// indices as strings, so paths are compared as strings.

const FIXTURE = fileURLToPath(new URL('./fixtures/valid.yaml', import.meta.url));
// Reported under a .json name: the documents are linted as JSON, like the bundle.
const SOURCE = FIXTURE.replace(/\.yaml$/, '.json');

// biome-ignore lint/suspicious/noExplicitAny: a test document is mutated freely, path by path.
type Doc = Record<string, any>;
const base = (): Doc => parse(readFileSync(FIXTURE, 'utf8'));

const MEMBER = '/workspaces/{workspace}/members/{member}';
const START = '/workspaces/{workspace}/computers/{computer}/start';
const REBOOT = '/workspaces/{workspace}/computers/{computer}/reboot';
const JSON_TYPE = 'application/json';
const OUTPUT = '/workspaces/{workspace}/computers/{computer}/output';
const SSE = 'text/event-stream';
const STREAM_AT = ['paths', OUTPUT, 'get', 'responses', '200', 'content', SSE];
const ITEM_AT = ['components', 'schemas', 'OutputStreamItem'];
const FILES = '/workspaces/{workspace}/computers/{computer}/files';
const OCTETS = 'application/octet-stream';
const TAR = 'application/x-tar';
/** The fixture's byte bodies: the upload's request body media type object, the download's 200. */
const bytes = (d: Doc) => ({
  upload: d.paths[FILES].put,
  uploadMedia: d.paths[FILES].put.requestBody.content[OCTETS],
  download: d.paths[FILES].get,
  ok: d.paths[FILES].get.responses['200'],
});
const HOOK = ['webhooks', 'computer.created', 'post'];
/** The fixture's one webhook's operation (`computer.created`). */
const hook = (d: Doc) => d.webhooks['computer.created'].post;
/** The fixture's stream: its response's media type object and its item schema, to break one thing. */
const stream = (d: Doc) => ({
  media: d.paths[OUTPUT].get.responses['200'].content[SSE],
  item: d.components.schemas.OutputStreamItem,
  events: d.paths[OUTPUT].get.responses['200'].content[SSE].examples.hello.value,
});

interface Case {
  mutate: (doc: Doc) => void;
  code: string;
  path: (string | number)[];
}

const cases: [string, Case][] = [
  // svc-id-pattern
  [
    'an `id` property that is a bare string',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.id = { type: 'string', maxLength: 27 };
      },
      code: 'svc-id-pattern',
      path: ['components', 'schemas', 'Workspace', 'properties', 'id'],
    },
  ],
  [
    'a `*_id` property (through allOf) without minLength',
    {
      mutate: (d) => {
        d.components.schemas.Operation.properties.target_id = {
          type: 'string',
          pattern: '^[0-9a-hjkmnp-tv-z]{27}$',
          maxLength: 27,
        };
      },
      code: 'svc-id-pattern',
      path: ['components', 'schemas', 'Operation', 'properties', 'target_id'],
    },
  ],
  [
    'an id with the wrong alphabet (uppercase allowed)',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.id = {
          type: 'string',
          pattern: '^[0-9A-Za-z]{27}$',
          minLength: 27,
          maxLength: 27,
        };
      },
      code: 'svc-id-pattern',
      path: ['components', 'schemas', 'Workspace', 'properties', 'id'],
    },
  ],
  [
    'a `*_id` query parameter that is a bare string',
    {
      mutate: (d) => {
        d.paths['/workspaces'].get.parameters.push({
          name: 'owner_id',
          in: 'query',
          description: 'Only workspaces of this owner.',
          schema: { type: 'string', maxLength: 27 },
        });
      },
      code: 'svc-id-pattern',
      path: ['paths', '/workspaces', 'get', 'parameters', 2],
    },
  ],

  // svc-path-parameter-accepts
  [
    'an id-only path parameter (`member`) that accepts names',
    {
      mutate: (d) => {
        d.paths[MEMBER].parameters[1].schema = { $ref: '#/components/schemas/IdOrName' };
      },
      code: 'svc-path-parameter-accepts',
      path: ['paths', MEMBER, 'parameters', 1],
    },
  ],
  [
    'a path parameter that does not say whether it takes an id or a name',
    {
      mutate: (d) => {
        delete d.components.parameters.Workspace['x-svc-accepts'];
      },
      code: 'svc-path-parameter-accepts',
      path: ['components', 'parameters', 'Workspace'],
    },
  ],
  [
    'a path parameter with an unknown `x-svc-accepts`',
    {
      mutate: (d) => {
        d.components.parameters.Workspace['x-svc-accepts'] = 'slug';
      },
      code: 'svc-path-parameter-accepts',
      path: ['components', 'parameters', 'Workspace'],
    },
  ],
  [
    'an id-or-name path parameter whose schema takes ids only',
    {
      mutate: (d) => {
        d.paths[START].parameters[1].schema = { $ref: '#/components/schemas/Id' };
      },
      code: 'svc-path-parameter-accepts',
      path: ['paths', START, 'parameters', 1],
    },
  ],
  [
    'an id-or-name path parameter whose description says only "id"',
    {
      mutate: (d) => {
        d.paths[START].parameters[1].description = "The computer's id.";
      },
      code: 'svc-path-parameter-accepts',
      path: ['paths', START, 'parameters', 1],
    },
  ],

  // svc-name-dns-label
  [
    'a `name` without the DNS-label pattern',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.name = { type: 'string', maxLength: 63 };
      },
      code: 'svc-name-dns-label',
      path: ['components', 'schemas', 'Workspace', 'properties', 'name'],
    },
  ],
  [
    'a `name` longer than 63',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.name = { ...d.components.schemas.Name, maxLength: 64 };
      },
      code: 'svc-name-dns-label',
      path: ['components', 'schemas', 'Workspace', 'properties', 'name'],
    },
  ],

  // svc-single-resource-envelope
  [
    'a single resource returned bare, without its noun',
    {
      mutate: (d) => {
        d.paths['/me'].get.responses['200'].content[JSON_TYPE].schema = {
          $ref: '#/components/schemas/Identity',
        };
      },
      code: 'svc-single-resource-envelope',
      path: ['components', 'schemas', 'Identity'],
    },
  ],
  [
    'a single-resource envelope with a second key',
    {
      mutate: (d) => {
        d.components.schemas.WorkspaceEnvelope.properties.meta = { type: 'object' };
      },
      code: 'svc-single-resource-envelope',
      path: ['components', 'schemas', 'WorkspaceEnvelope'],
    },
  ],
  [
    'a single resource under a plural noun',
    {
      mutate: (d) => {
        const schema = d.paths['/me'].get.responses['200'].content[JSON_TYPE].schema;
        schema.properties = { identities: schema.properties.identity };
        schema.required = ['identities'];
        d.paths['/me'].get.responses['200'].content[JSON_TYPE].examples = {
          me: { value: { identities: { id: '01jd5x3k2m4n6p7q8r9s0t1v2w3', name: 'ada' } } },
        };
      },
      code: 'svc-single-resource-envelope',
      path: ['paths', '/me', 'get', 'responses', '200', 'content', JSON_TYPE, 'schema'],
    },
  ],
  [
    'a single-resource noun that is not required',
    {
      mutate: (d) => {
        d.components.schemas.WorkspaceEnvelope.required = [];
      },
      code: 'svc-single-resource-envelope',
      path: ['components', 'schemas', 'WorkspaceEnvelope'],
    },
  ],

  // svc-list-envelope
  [
    'a list without `has_more`',
    {
      mutate: (d) => {
        const media = d.paths['/workspaces'].get.responses['200'].content[JSON_TYPE];
        delete media.schema.properties.has_more;
        media.schema.required = ['workspaces', 'next_cursor'];
        delete media.examples['last-page'].value.has_more;
      },
      code: 'svc-list-envelope',
      path: ['paths', '/workspaces', 'get', 'responses', '200', 'content', JSON_TYPE, 'schema'],
    },
  ],
  [
    'a list whose `next_cursor` cannot be null',
    {
      mutate: (d) => {
        const media = d.paths['/workspaces'].get.responses['200'].content[JSON_TYPE];
        media.schema.properties.next_cursor.type = 'string';
        media.examples['last-page'].value.next_cursor = 'abc';
      },
      code: 'svc-list-envelope',
      path: ['paths', '/workspaces', 'get', 'responses', '200', 'content', JSON_TYPE, 'schema'],
    },
  ],
  [
    'a list that takes no `cursor`',
    {
      mutate: (d) => {
        d.paths['/workspaces'].get.parameters.pop();
      },
      code: 'svc-list-envelope',
      path: ['paths', '/workspaces', 'get'],
    },
  ],

  // svc-long-running-202
  [
    'a 202 whose `operations` is optional',
    {
      mutate: (d) => {
        d.paths[START].post.responses['202'].content[JSON_TYPE].schema.required = [];
      },
      code: 'svc-long-running-202',
      path: ['paths', START, 'post', 'responses', '202', 'content', JSON_TYPE, 'schema'],
    },
  ],
  [
    'a 202 whose operations lack `state`',
    {
      mutate: (d) => {
        const op = d.components.schemas.Operation;
        delete op.properties.state;
        op.required = ['id', 'type', 'target_id'];
        delete d.paths[START].post.responses['202'].content[JSON_TYPE].examples.started.value.operations[0]
          .state;
      },
      code: 'svc-long-running-202',
      path: ['paths', START, 'post', 'responses', '202', 'content', JSON_TYPE, 'schema'],
    },
  ],

  // svc-error-envelope
  [
    'an error whose `request_id` is optional',
    {
      mutate: (d) => {
        d.components.schemas.ErrorEnvelope.properties.error.required = ['code', 'message', 'details'];
      },
      code: 'svc-error-envelope',
      path: ['components', 'schemas', 'ErrorEnvelope'],
    },
  ],
  [
    'an error response without a body',
    {
      mutate: (d) => {
        d.paths['/me'].get.responses['404'] = {
          description: 'Not found.',
          headers: d.paths['/me'].get.responses['200'].headers,
        };
      },
      code: 'svc-error-envelope',
      path: ['paths', '/me', 'get', 'responses', '404'],
    },
  ],

  // svc-bearer-auth
  [
    'an operation that opts out of security',
    {
      mutate: (d) => {
        d.paths['/me'].get.security = [];
        d.paths['/me'].get['x-svc'].permission = 'public';
      },
      code: 'svc-bearer-auth',
      path: ['paths', '/me', 'get', 'security'],
    },
  ],
  [
    'an anonymous alternative in the global security',
    {
      mutate: (d) => {
        d.security.push({});
      },
      code: 'svc-bearer-auth',
      path: ['security', 1],
    },
  ],
  [
    'a non-bearer scheme',
    {
      mutate: (d) => {
        d.components.securitySchemes.basicAuth = { type: 'http', scheme: 'digest', description: 'Digest.' };
        d.paths['/me'].get.security = [{ basicAuth: [] }];
        d.paths['/me'].get['x-svc'].permission = 'credential';
      },
      code: 'svc-bearer-auth',
      path: ['paths', '/me', 'get', 'security', 0],
    },
  ],
  [
    'the health route that does not declare `security: []`',
    {
      mutate: (d) => {
        delete d.paths['/health'].get.security;
        d.paths['/health'].get['x-svc'].permission = 'principal';
      },
      code: 'svc-bearer-auth',
      path: ['paths', '/health', 'get'],
    },
  ],

  // svc-idempotency-key
  [
    'a POST without `Idempotency-Key`',
    {
      mutate: (d) => {
        d.paths[START].post.parameters = [];
      },
      code: 'svc-idempotency-key',
      path: ['paths', START, 'post', 'parameters'],
    },
  ],
  [
    'a create where `Idempotency-Key` is optional',
    {
      mutate: (d) => {
        d.paths['/workspaces'].post.parameters = [{ $ref: '#/components/parameters/IdempotencyKey' }];
      },
      code: 'svc-idempotency-key',
      path: ['components', 'parameters', 'IdempotencyKey'],
    },
  ],

  // svc-server-v1
  [
    'a server URL with a trailing slash',
    {
      mutate: (d) => {
        d.servers[0].url = 'https://api.example.com/v1/';
      },
      code: 'svc-server-v1',
      path: ['servers', 0, 'url'],
    },
  ],
  [
    'a server URL without the version prefix',
    {
      mutate: (d) => {
        d.servers[0].url = 'https://api.example.com';
      },
      code: 'svc-server-v1',
      path: ['servers', 0, 'url'],
    },
  ],

  // svc-operation-examples
  [
    'a request body without a named example',
    {
      mutate: (d) => {
        delete d.paths['/workspaces'].post.requestBody.content[JSON_TYPE].examples;
      },
      code: 'svc-operation-examples',
      path: ['paths', '/workspaces', 'post', 'requestBody', 'content', JSON_TYPE],
    },
  ],
  [
    'a response with `example` but no named `examples`',
    {
      mutate: (d) => {
        const media = d.paths['/health'].get.responses['200'].content[JSON_TYPE];
        media.example = media.examples.ok.value;
        delete media.examples;
      },
      code: 'svc-operation-examples',
      path: ['paths', '/health', 'get', 'responses', '200', 'content', JSON_TYPE],
    },
  ],

  // svc-custom-action
  [
    'an action segment whose operation declares no action',
    {
      mutate: (d) => {
        delete d.paths[START].post['x-svc'].action;
        delete d.paths[START].post['x-svc'].mcp;
      },
      code: 'svc-custom-action',
      path: ['paths', START, 'post'],
    },
  ],
  [
    'an action segment that is not the verb its operation declares',
    {
      mutate: (d) => {
        d.paths[REBOOT] = d.paths[START];
        delete d.paths[START];
        d.paths[REBOOT].post.operationId = 'rebootComputer';
      },
      code: 'svc-custom-action',
      path: ['paths', REBOOT, 'post'],
    },
  ],
  [
    'a custom action that is not a POST',
    {
      mutate: (d) => {
        d.paths[START].put = d.paths[START].post;
        delete d.paths[START].post;
      },
      code: 'svc-custom-action',
      path: ['paths', START, 'put'],
    },
  ],
  [
    'a custom action whose operationId has another verb',
    {
      mutate: (d) => {
        d.paths[START].post.operationId = 'stopComputer';
      },
      code: 'svc-custom-action',
      path: ['paths', START, 'post'],
    },
  ],
  [
    'a standard method declared as a custom action',
    {
      mutate: (d) => {
        d.paths['/workspaces'].post['x-svc'] = {
          permission: 'principal',
          action: 'create',
          mcp: { destructive: false, idempotent: false },
        };
      },
      code: 'svc-custom-action',
      path: ['paths', '/workspaces', 'post'],
    },
  ],

  // svc-policy
  [
    'an operation without x-svc',
    {
      mutate: (d) => {
        delete d.paths['/me'].get['x-svc'];
      },
      code: 'svc-policy',
      path: ['paths', '/me', 'get'],
    },
  ],
  [
    'an unknown key in x-svc',
    {
      mutate: (d) => {
        d.paths['/me'].get['x-svc'].role = 'viewer';
      },
      code: 'svc-policy',
      path: ['paths', '/me', 'get', 'x-svc', 'role'],
    },
  ],
  [
    'a permission outside the vocabulary',
    {
      mutate: (d) => {
        d.paths[MEMBER].delete['x-svc'].permission = 'admin';
      },
      code: 'svc-policy',
      path: ['paths', MEMBER, 'delete', 'x-svc', 'permission'],
    },
  ],
  [
    '`public` on an operation that has security',
    {
      mutate: (d) => {
        d.paths['/me'].get['x-svc'].permission = 'public';
      },
      code: 'svc-policy',
      path: ['paths', '/me', 'get', 'x-svc', 'permission'],
    },
  ],
  [
    'an operation without security that is not `public`',
    {
      mutate: (d) => {
        d.paths['/health'].get['x-svc'].permission = 'principal';
      },
      code: 'svc-policy',
      path: ['paths', '/health', 'get', 'x-svc', 'permission'],
    },
  ],
  [
    '`credential` on an operation called with the default scheme',
    {
      mutate: (d) => {
        d.paths['/workspaces'].get['x-svc'].permission = 'credential';
      },
      code: 'svc-policy',
      path: ['paths', '/workspaces', 'get', 'x-svc', 'permission'],
    },
  ],
  [
    'an operation in `{workspace}` that needs no role there',
    {
      mutate: (d) => {
        d.paths[MEMBER].delete['x-svc'].permission = 'principal';
      },
      code: 'svc-policy',
      path: ['paths', MEMBER, 'delete', 'x-svc', 'permission'],
    },
  ],
  [
    'a GET that needs more than `read`',
    {
      mutate: (d) => {
        d.paths['/me'].get['x-svc'].permission = 'manage';
      },
      code: 'svc-policy',
      path: ['paths', '/me', 'get', 'x-svc', 'permission'],
    },
  ],
  [
    'a transaction value outside the vocabulary',
    {
      mutate: (d) => {
        d.paths[MEMBER].delete['x-svc'].transaction = 'later';
      },
      code: 'svc-policy',
      path: ['paths', MEMBER, 'delete', 'x-svc', 'transaction'],
    },
  ],
  [
    '`transaction` on an operation that is no mutation',
    {
      mutate: (d) => {
        d.paths['/me'].get['x-svc'].transaction = 'none';
      },
      code: 'svc-policy',
      path: ['paths', '/me', 'get', 'x-svc', 'transaction'],
    },
  ],
  [
    '`cli: execution` on an operation that takes no command',
    {
      mutate: (d) => {
        d.paths[START].post['x-svc'].cli = 'execution';
      },
      code: 'svc-policy',
      path: ['paths', START, 'post', 'x-svc', 'cli'],
    },
  ],
  [
    'an answer with an `execution` and no `cli: execution`',
    {
      mutate: (d) => {
        d.paths[START].post.responses['202'].content[JSON_TYPE].schema.properties.execution = {
          type: 'object',
          description: 'What the command returned.',
        };
      },
      code: 'svc-policy',
      path: ['paths', START, 'post', 'x-svc'],
    },
  ],
  [
    'an answer with a `key_file` and no `cli: key-file`',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.key_file = {
          type: 'object',
          description: 'A one-time secret.',
        };
      },
      code: 'svc-policy',
      path: ['paths', '/workspaces', 'post', 'x-svc'],
    },
  ],
  [
    '`cli: key-file` on an operation that answers no `key_file`',
    {
      mutate: (d) => {
        d.paths[MEMBER].delete['x-svc'].cli = 'key-file';
      },
      code: 'svc-policy',
      path: ['paths', MEMBER, 'delete', 'x-svc', 'cli'],
    },
  ],
  [
    'a custom action without MCP hints',
    {
      mutate: (d) => {
        delete d.paths[START].post['x-svc'].mcp;
      },
      code: 'svc-policy',
      path: ['paths', START, 'post', 'x-svc', 'action'],
    },
  ],
  [
    'MCP hints on a standard method',
    {
      mutate: (d) => {
        d.paths[MEMBER].delete['x-svc'].mcp = { destructive: true, idempotent: true };
      },
      code: 'svc-policy',
      path: ['paths', MEMBER, 'delete', 'x-svc', 'mcp'],
    },
  ],
  [
    'MCP hints that are not both booleans',
    {
      mutate: (d) => {
        d.paths[START].post['x-svc'].mcp = { destructive: 'no' };
      },
      code: 'svc-policy',
      path: ['paths', START, 'post', 'x-svc', 'mcp'],
    },
  ],

  // svc-custom-action and svc-policy on stream operations: the valid fixture's stream ends in a singular
  // segment and needs `exec`, which both accept for a stream only.
  [
    'a custom action that declares the stream verb',
    {
      mutate: (d) => {
        const item = d.paths[START];
        delete d.paths[START];
        d.paths[START.replace(/start$/, 'stream')] = item;
        item.post.operationId = 'streamComputer';
        item.post['x-svc'].action = 'stream';
      },
      code: 'svc-custom-action',
      path: ['paths', START.replace(/start$/, 'stream'), 'post'],
    },
  ],
  [
    // A GET on a singular segment reads a singleton (`GET …/{terminal}/screen`); a POST there acts.
    'a singular segment on a POST that declares no action (its 200 is JSON)',
    {
      mutate: (d) => {
        const ok = d.paths[OUTPUT].get.responses['200'];
        ok.content = { [JSON_TYPE]: d.paths['/me'].get.responses['200'].content[JSON_TYPE] };
        d.paths[OUTPUT].get.operationId = 'getComputerOutput';
        d.paths[OUTPUT].get['x-svc'].permission = 'read';
        d.paths[OUTPUT].post = d.paths[OUTPUT].get;
        d.paths[OUTPUT].post.parameters = [
          ...(d.paths[OUTPUT].post.parameters ?? []),
          { $ref: '#/components/parameters/IdempotencyKey' },
        ];
        delete d.paths[OUTPUT].get;
        delete d.components.schemas.OutputStreamItem;
      },
      code: 'svc-custom-action',
      path: ['paths', OUTPUT, 'post'],
    },
  ],
  [
    'a GET that is no stream needing more than read',
    {
      mutate: (d) => {
        d.paths['/workspaces'].get.parameters = [];
        d.paths['/workspaces'].get['x-svc'].permission = 'exec';
        const item = d.paths['/workspaces'];
        delete d.paths['/workspaces'];
        d.paths['/workspaces/{workspace}/computers'] = {
          parameters: [{ $ref: '#/components/parameters/Workspace' }],
          ...item,
        };
        item.get.parameters = [
          { $ref: '#/components/parameters/Limit' },
          { $ref: '#/components/parameters/Cursor' },
        ];
      },
      code: 'svc-policy',
      path: ['paths', '/workspaces/{workspace}/computers', 'get', 'x-svc', 'permission'],
    },
  ],

  // svc-byte-body
  [
    'a byte request body on a PATCH',
    {
      mutate: (d) => {
        d.paths[FILES].patch = bytes(d).upload;
        delete d.paths[FILES].put;
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'patch', 'requestBody', 'content', OCTETS],
    },
  ],
  [
    'a byte request body on a POST whose operationId does not start with `send`',
    {
      mutate: (d) => {
        d.paths[FILES].post = bytes(d).upload;
        delete d.paths[FILES].put;
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'post', 'operationId'],
    },
  ],
  [
    'an upload whose operationId does not start with `upload`',
    {
      mutate: (d) => {
        bytes(d).upload.operationId = 'updateComputerFile';
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'operationId'],
    },
  ],
  [
    'a byte request body whose schema is not binary',
    {
      mutate: (d) => {
        bytes(d).uploadMedia.schema = { type: 'string', maxLength: 10, 'x-svc-max-bytes': 10 };
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'requestBody', 'content', OCTETS, 'schema'],
    },
  ],
  [
    'a byte request body without x-svc-max-bytes',
    {
      mutate: (d) => {
        delete bytes(d).uploadMedia.schema['x-svc-max-bytes'];
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'requestBody', 'content', OCTETS, 'schema'],
    },
  ],
  [
    'a byte request body whose x-svc-max-bytes is not a positive integer',
    {
      mutate: (d) => {
        bytes(d).uploadMedia.schema['x-svc-max-bytes'] = 0.5;
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'requestBody', 'content', OCTETS, 'schema'],
    },
  ],
  [
    'an upload that does not answer 413',
    {
      mutate: (d) => {
        delete bytes(d).upload.responses['413'];
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'responses'],
    },
  ],
  [
    'an upload that does not answer 415',
    {
      mutate: (d) => {
        delete bytes(d).upload.responses['415'];
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'put', 'responses'],
    },
  ],
  [
    'a download whose operationId does not start with `download`',
    {
      mutate: (d) => {
        bytes(d).download.operationId = 'getComputerFileContent';
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'get', 'operationId'],
    },
  ],
  [
    'a file download without ETag',
    {
      mutate: (d) => {
        delete bytes(d).ok.headers.ETag;
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'get', 'responses', '200'],
    },
  ],
  [
    'a file download without Content-Length',
    {
      mutate: (d) => {
        delete bytes(d).ok.headers['Content-Length'];
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'get', 'responses', '200'],
    },
  ],
  [
    'a download whose schema is not binary',
    {
      mutate: (d) => {
        bytes(d).ok.content[OCTETS].schema = { type: 'string', format: 'byte' };
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'get', 'responses', '200', 'content', OCTETS, 'schema'],
    },
  ],
  [
    'an error response that is bytes',
    {
      mutate: (d) => {
        const bad = structuredClone(d.components.responses.BadRequest);
        bad.content[TAR] = { schema: { type: 'string', format: 'binary' } };
        bytes(d).download.responses['400'] = bad;
      },
      code: 'svc-byte-body',
      path: ['paths', FILES, 'get', 'responses', '400', 'content', TAR],
    },
  ],

  [
    'a GET reading inside a computer that needs more than exec',
    {
      mutate: (d) => {
        d.paths[FILES].get['x-svc'].permission = 'manage';
      },
      code: 'svc-policy',
      path: ['paths', FILES, 'get', 'x-svc', 'permission'],
    },
  ],

  // svc-event-stream
  [
    'an event stream answered by another status than 200',
    {
      mutate: (d) => {
        const bad = structuredClone(d.components.responses.BadRequest);
        bad.content[SSE] = structuredClone(stream(d).media);
        d.paths[OUTPUT].get.responses['400'] = bad;
      },
      code: 'svc-event-stream',
      path: ['paths', OUTPUT, 'get', 'responses', '400', 'content', SSE],
    },
  ],
  [
    'a stream operation whose operationId does not start with `stream`',
    {
      mutate: (d) => {
        d.paths[OUTPUT].get.operationId = 'getComputerOutput';
      },
      code: 'svc-event-stream',
      path: ['paths', OUTPUT, 'get', 'operationId'],
    },
  ],
  [
    'a stream whose schema is the item, not an array of it',
    {
      mutate: (d) => {
        stream(d).media.schema = { $ref: '#/components/schemas/OutputStreamItem' };
        stream(d).media.examples.hello.value = stream(d).events[0];
      },
      code: 'svc-event-stream',
      // Reported where the schema is written: the $ref'd item schema.
      path: ITEM_AT,
    },
  ],
  [
    'a stream whose item schema is written inline, not in components',
    {
      mutate: (d) => {
        stream(d).media.schema.items = stream(d).item;
        delete d.components.schemas.OutputStreamItem;
      },
      code: 'svc-event-stream',
      path: [...STREAM_AT, 'schema'],
    },
  ],
  [
    'an item whose `event` is a string without an enum',
    {
      mutate: (d) => {
        stream(d).item.properties.event = { type: 'string', maxLength: 64, pattern: '^[a-z.]+$' };
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'event'],
    },
  ],
  [
    'an item whose `id` is an integer',
    {
      mutate: (d) => {
        stream(d).item.properties.id = { type: 'integer', format: 'int64', minimum: 1, maximum: 1000000 };
        for (const event of stream(d).events) event.id = Number(event.id);
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'id'],
    },
  ],
  [
    'an item whose `data` does not say it is JSON',
    {
      mutate: (d) => {
        delete stream(d).item.properties.data.contentMediaType;
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'data'],
    },
  ],
  [
    'a branch that does not require `data`',
    {
      mutate: (d) => {
        stream(d).item.oneOf[0].required = ['event'];
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'oneOf', 0],
    },
  ],
  [
    'a branch that names no event',
    {
      mutate: (d) => {
        stream(d).item.oneOf.push({
          required: ['event', 'data'],
          properties: { data: { contentSchema: { $ref: '#/components/schemas/OutputChunk' } } },
        });
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'oneOf', 2, 'properties'],
    },
  ],
  [
    'a branch whose data names no schema',
    {
      mutate: (d) => {
        stream(d).item.oneOf[0].properties.data = { maxLength: 100 };
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'oneOf', 0, 'properties'],
    },
  ],
  [
    "a branch whose data's schema is inline, not in components",
    {
      mutate: (d) => {
        stream(d).item.oneOf[0].properties.data.contentSchema = structuredClone(
          d.components.schemas.OutputChunk,
        );
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'oneOf', 0, 'properties'],
    },
  ],
  [
    'an event of the enum that no branch names',
    {
      mutate: (d) => {
        stream(d).item.properties.event.enum.push('exit');
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'event'],
    },
  ],
  [
    'an event that two branches name',
    {
      mutate: (d) => {
        stream(d).item.oneOf[1].properties.event = { enum: ['stream.ended', 'output'] };
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'event'],
    },
  ],
  [
    'a branch that names an event the enum does not list',
    {
      mutate: (d) => {
        stream(d).item.oneOf.push({
          required: ['event', 'data'],
          properties: {
            event: { const: 'exit' },
            data: { contentSchema: { $ref: '#/components/schemas/OutputChunk' } },
          },
        });
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'oneOf', 2, 'properties', 'event'],
    },
  ],
  [
    'a stream without `stream.ended`',
    {
      mutate: (d) => {
        stream(d).item.properties.event.enum = ['output'];
        stream(d).item.oneOf.pop();
        stream(d).events.pop();
      },
      code: 'svc-event-stream',
      path: [...ITEM_AT, 'properties', 'event'],
    },
  ],
  [
    'an example event with an unknown name',
    {
      mutate: (d) => {
        stream(d).events[0].event = 'progress';
      },
      code: 'svc-event-stream',
      path: [...STREAM_AT, 'examples', 'hello', 'value', 0, 'event'],
    },
  ],
  [
    'an example event whose id does not match the pattern',
    {
      mutate: (d) => {
        stream(d).events[0].id = 'one';
      },
      code: 'svc-event-stream',
      path: [...STREAM_AT, 'examples', 'hello', 'value', 0, 'id'],
    },
  ],
  [
    'an example event whose data is not JSON',
    {
      mutate: (d) => {
        stream(d).events[0].data = '{text: hello}';
      },
      code: 'svc-event-stream',
      path: [...STREAM_AT, 'examples', 'hello', 'value', 0, 'data'],
    },
  ],
  [
    "an example event whose data does not match its branch's schema",
    {
      mutate: (d) => {
        stream(d).events[1].data = '{"reason":"shutting_down"}';
      },
      code: 'svc-event-stream',
      path: [...STREAM_AT, 'examples', 'hello', 'value', 1, 'data'],
    },
  ],

  // svc-query-parameter-snake-case
  [
    'a camelCase query parameter',
    {
      mutate: (d) => {
        d.paths['/workspaces'].get.parameters.push({
          name: 'includeDeleted',
          in: 'query',
          description: 'Also deleted workspaces.',
          schema: { type: 'boolean', default: false },
        });
      },
      code: 'svc-query-parameter-snake-case',
      path: ['paths', '/workspaces', 'get', 'parameters', 2, 'name'],
    },
  ],
  [
    'a kebab-case query parameter in components',
    {
      mutate: (d) => {
        d.components.parameters.Deleted = {
          name: 'include-deleted',
          in: 'query',
          description: 'Also deleted workspaces.',
          schema: { type: 'boolean', default: false },
        };
        d.paths['/workspaces'].get.parameters.push({ $ref: '#/components/parameters/Deleted' });
      },
      code: 'svc-query-parameter-snake-case',
      path: ['components', 'parameters', 'Deleted', 'name'],
    },
  ],

  // svc-snake-case-properties
  [
    'a camelCase property',
    {
      mutate: (d) => {
        d.components.schemas.Workspace.properties.displayName = {
          type: 'string',
          maxLength: 63,
          pattern: '^.*$',
        };
      },
      code: 'svc-snake-case-properties',
      path: ['components', 'schemas', 'Workspace', 'properties', 'displayName'],
    },
  ],

  // svc-webhooks
  [
    'a webhook named by no workspace event type',
    {
      mutate: (d) => {
        d.webhooks['computer.exploded'] = d.webhooks['computer.created'];
      },
      code: 'svc-webhooks',
      path: ['webhooks', 'computer.exploded'],
    },
  ],
  [
    'a workspace event type with no webhook',
    {
      mutate: (d) => {
        d.components.schemas.WorkspaceEventType.enum.push('computer.deleted');
      },
      code: 'svc-webhooks',
      path: ['webhooks'],
    },
  ],
  [
    'a webhook whose operationId is not its camelCased event type + Webhook',
    {
      mutate: (d) => {
        hook(d).operationId = 'createdComputerWebhook';
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'operationId'],
    },
  ],
  [
    'a webhook that is a PUT',
    {
      mutate: (d) => {
        d.webhooks['computer.created'].put = hook(d);
      },
      code: 'svc-webhooks',
      path: ['webhooks', 'computer.created', 'put'],
    },
  ],
  [
    'a webhook whose body is optional',
    {
      mutate: (d) => {
        hook(d).requestBody.required = false;
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'requestBody'],
    },
  ],
  [
    'a webhook whose body is another schema than the stream gives the event',
    {
      mutate: (d) => {
        hook(d).requestBody.content[JSON_TYPE].schema = { $ref: '#/components/schemas/Workspace' };
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'requestBody', 'content', JSON_TYPE],
    },
  ],
  [
    'a webhook whose body is inline, not the components schema',
    {
      mutate: (d) => {
        hook(d).requestBody.content[JSON_TYPE].schema = { type: 'object', maxProperties: 8 };
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'requestBody', 'content', JSON_TYPE],
    },
  ],
  [
    'a webhook without the webhook-signature header',
    {
      mutate: (d) => {
        hook(d).parameters.pop();
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'parameters'],
    },
  ],
  [
    'a webhook whose webhook-id header is optional',
    {
      mutate: (d) => {
        hook(d).parameters[0] = { ...d.components.parameters.WebhookId, required: false };
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'parameters'],
    },
  ],
  [
    "a webhook that inherits the document's Bearer security",
    {
      mutate: (d) => {
        delete hook(d).security;
      },
      code: 'svc-webhooks',
      path: HOOK,
    },
  ],
  [
    'a webhook that answers 200 rather than 2XX',
    {
      mutate: (d) => {
        hook(d).responses = { '200': { description: 'Received.' } };
      },
      code: 'svc-webhooks',
      path: [...HOOK, 'responses'],
    },
  ],
];

const show = (findings: Finding[]) => findings.map((f) => `${f.code} at ${f.path.join(' > ')}: ${f.message}`);

describe('the valid fixture', () => {
  it('passes the whole ruleset (oas, OWASP and svc-*) without a single finding', async () => {
    expect(show(await lint(base(), SOURCE))).toEqual([]);
  });
});

describe('each svc-* rule fires where its convention is broken', () => {
  it.each(cases)('%s', async (_name, { mutate, code, path }) => {
    const doc = base();
    mutate(doc);
    const findings = await lint(doc, SOURCE);
    const svc = findings.filter((f) => f.code.startsWith('svc-'));
    // The rule fires at the expected place...
    expect(
      svc.filter((f) => f.code === code).map((f) => f.path.map(String)),
      show(findings).join('\n'),
    ).toContainEqual(path.map(String));
    // ...as an error, and no other svc-* rule fires: each case isolates one convention.
    expect(svc.every((f) => f.severity === 0)).toBe(true);
    expect([...new Set(svc.map((f) => f.code))], show(svc).join('\n')).toEqual([code]);
  });

  it('covers every svc-* rule in the ruleset', async () => {
    const ruleset = readFileSync(new URL('./spectral.yaml', import.meta.url), 'utf8');
    const declared = [...ruleset.matchAll(/^ {2}(svc-[a-z0-9-]+):/gm)].map((m) => m[1]).sort();
    expect([...new Set(cases.map(([, c]) => c.code))].sort()).toEqual(declared);
  });
});

// The ruleset switches some OWASP rules off for single locations (see `overrides` in spectral.yaml).
// These cases prove each exemption is that narrow: the same rule still fires one route over.
const owaspCases: [string, Case][] = [
  [
    'a GET other than /health without security still needs it',
    {
      mutate: (d) => {
        d.paths['/me'].get.security = [];
      },
      code: 'owasp:api2:2023-read-restricted',
      path: ['paths', '/me', 'get', 'security'],
    },
  ],
  [
    'an operation that takes input still documents its 400',
    {
      mutate: (d) => {
        delete d.paths['/workspaces'].get.responses['400'];
      },
      code: 'owasp:api8:2023-define-error-validation',
      path: ['paths', '/workspaces', 'get', 'responses'],
    },
  ],
  [
    'an authenticated operation without a 401',
    {
      mutate: (d) => {
        delete d.paths['/me'].get.responses['401'];
      },
      code: 'owasp:api8:2023-define-error-responses-401',
      path: ['paths', '/me', 'get', 'responses'],
    },
  ],
  [
    'a response without Access-Control-Allow-Origin',
    {
      mutate: (d) => {
        delete d.paths['/me'].get.responses['200'].headers['Access-Control-Allow-Origin'];
      },
      code: 'owasp:api8:2023-define-cors-origin',
      path: ['paths', '/me', 'get', 'responses', '200', 'headers'],
    },
  ],
  [
    'a string that is no byte body still needs maxLength, next to the byte bodies',
    {
      mutate: (d) => {
        delete d.paths[FILES].parameters[2].schema.maxLength;
      },
      code: 'owasp:api4:2023-string-limit',
      path: ['paths', FILES, 'parameters', '2', 'schema'],
    },
  ],
  [
    'a byte body elsewhere than the named ones still needs maxLength',
    {
      mutate: (d) => {
        d.paths[`${FILES}/other`] = structuredClone(d.paths[FILES]);
      },
      code: 'owasp:api4:2023-string-limit',
      path: ['paths', `${FILES}/other`, 'get', 'responses', '200', 'content', OCTETS, 'schema'],
    },
  ],
];

describe('OWASP rules still fire next to their narrow exemptions', () => {
  it.each(owaspCases)('%s', async (_name, { mutate, code, path }) => {
    const doc = base();
    mutate(doc);
    const findings = await lint(doc, SOURCE);
    expect(
      findings.filter((f) => f.code === code).map((f) => f.path.map(String)),
      show(findings).join('\n'),
    ).toContainEqual(path.map(String));
  });
});

// svc-name-dns-label is off for one property, FileInfo's `name` (a file's name, not a resource's; see
// `overrides` in spectral.yaml). The same property on any other schema is still held to a DNS label.
describe('svc-name-dns-label still fires next to its FileInfo exemption', () => {
  const fileName = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\x00]+$' };
  const withSchema = (schema: string) => {
    const doc = base();
    doc.components.schemas[schema] = {
      type: 'object',
      required: ['name'],
      properties: { name: fileName },
    };
    return doc;
  };
  const at = (schema: string) => ['components', 'schemas', schema, 'properties', 'name'];
  const nameFindings = async (doc: Doc) =>
    (await lint(doc, SOURCE)).filter((f) => f.code === 'svc-name-dns-label').map((f) => f.path.map(String));

  it('accepts a file name as FileInfo.name', async () => {
    expect(await nameFindings(withSchema('FileInfo'))).toEqual([]);
  });

  it('refuses the same name on another schema', async () => {
    expect(await nameFindings(withSchema('FileEntry'))).toEqual([at('FileEntry')]);
  });
});

// A webhook is a request the service SENDS: the JSON-API rules for our own paths (envelopes, errors,
// x-svc, Idempotency-Key, security, rate limits) skip the `webhooks` section on purpose (they walk
// `paths` only; OWASP's operation rules do too), while OWASP's schema limits still reach its payload.
describe('the webhooks section: the JSON-API rules skip it, the schema rules do not', () => {
  it('the same operation the fixture accepts as a webhook is refused by them as a path', async () => {
    const doc = base();
    doc.paths['/computer-created'] = { post: hook(doc) };
    delete doc.webhooks;
    // Without its webhook, the event type is reported by svc-webhooks too; the rest is the path's.
    const codes = new Set((await lint(doc, SOURCE)).map((f) => f.code));
    for (const code of [
      'svc-policy',
      'svc-idempotency-key',
      'svc-operation-examples',
      'owasp:api8:2023-define-error-responses-401',
      'owasp:api4:2023-rate-limit-responses-429',
    ])
      expect([...codes], code).toContain(code);
  });

  it("OWASP's string limit reaches a webhook's payload schema", async () => {
    const doc = base();
    hook(doc).requestBody.content[JSON_TYPE].schema = {
      type: 'object',
      properties: { note: { type: 'string', pattern: '^.*$' } },
    };
    const findings = await lint(doc, SOURCE);
    expect(
      findings.filter((f) => f.code === 'owasp:api4:2023-string-limit').map((f) => f.path.map(String)),
    ).toContainEqual([...HOOK, 'requestBody', 'content', JSON_TYPE, 'schema', 'properties', 'note']);
  });
});
