// Lists the server must keep in code (role ranks, state classes, driver actions, key algorithms, the
// database's CHECK constraints) against the spec's enums, read from the bundle. Most lists are already
// typed from `@svc/contract` (a value added to the spec does not compile until handled); this file
// checks what the compiler cannot: the values at run time, the order of roles, and the live schema.
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { beforeAll, describe, expect, test } from 'vitest';
import { driverMethodOf, OPERATION_DRIVER_METHOD } from '../src/computers/driver.js';
import { MAX_LIFETIME_SECONDS } from '../src/computers/lifetimes.js';
import { TERMINAL_OPERATION_STATES, TRANSIENT_COMPUTER_STATES } from '../src/computers/states.js';
import { COMPUTER_ACTIONS } from '../src/computers/transitions.js';
import { atLeast } from '../src/identity/access.js';
import { KEY_ALGORITHMS } from '../src/identity/auth/keypair.js';
import type { Role } from '../src/identity/roles.js';
import type { Database } from '../src/platform/db/database.js';
import { describeEngines } from './support/databases.js';

const document = loadDocument();
const schemas = (doc: OpenApiDocument) => doc.components.schemas ?? {};

/** The `enum` of a named schema of the bundle. */
function specEnum(name: string, doc: OpenApiDocument = document): string[] {
  const schema = schemas(doc)[name] as { enum?: unknown[] } | undefined;
  if (!schema?.enum) throw new Error(`the spec has no enum schema ${name}`);
  return schema.enum.map(String);
}

/**
 * What differs between a list kept in code and the spec's, one line per value, naming both: empty when
 * they hold the same values (order aside).
 */
function drift(what: string, code: Iterable<string>, spec: Iterable<string>): string[] {
  const have = new Set(code);
  const want = new Set(spec);
  return [
    ...[...want].filter((v) => !have.has(v)).map((v) => `${what}: the spec has '${v}', the code does not`),
    ...[...have].filter((v) => !want.has(v)).map((v) => `${what}: the code has '${v}', the spec does not`),
  ];
}

describe('drift() names what differs', () => {
  test('a value added to the spec, and one the spec dropped', () => {
    const roles = specEnum('Role');
    expect(drift('Role', roles, [...roles, 'auditor'])).toEqual([
      "Role: the spec has 'auditor', the code does not",
    ]);
    expect(drift('Role', roles, roles.slice(1))).toEqual([
      `Role: the code has '${roles[0]}', the spec does not`,
    ]);
    expect(drift('Role', [...roles].reverse(), roles)).toEqual([]);
  });
});

describe('lists in code match the spec', () => {
  test('roles rank in the order of the spec, strongest first (design §8)', () => {
    // The spec lists Role strongest first and describes each role as the next one plus more.
    const roles = specEnum('Role') as Role[];
    const wrong: string[] = [];
    roles.forEach((stronger, i) => {
      for (const weaker of roles.slice(i + 1)) {
        if (!atLeast(stronger, weaker)) wrong.push(`${stronger} should be at least ${weaker}`);
        if (atLeast(weaker, stronger)) wrong.push(`${weaker} should rank below ${stronger}`);
      }
    });
    expect(wrong).toEqual([]);
  });

  test('every operation state is final or not, and the final ones are the spec’s', () => {
    expect(
      drift('final OperationState', TERMINAL_OPERATION_STATES, ['succeeded', 'failed', 'canceled']),
    ).toEqual([]);
    for (const state of TERMINAL_OPERATION_STATES) expect(specEnum('OperationState')).toContain(state);
  });

  test('the transient computer states are exactly the states actions hold while they run', () => {
    // And `moving`, which a drain holds while it moves a computer to another host (design §4.4).
    const during = [...Object.values(COMPUTER_ACTIONS).map((rule) => rule.during), 'moving'];
    expect(drift('transient ComputerState', TRANSIENT_COMPUTER_STATES, during)).toEqual([]);
    const used = Object.values(COMPUTER_ACTIONS).flatMap((rule) => [...rule.from, rule.during, rule.to]);
    for (const state of used) expect(specEnum('ComputerState')).toContain(state);
  });

  test("every spec operation type has a driver method; driver actions are the spec's lifecycle types", () => {
    const types = specEnum('OperationType');
    expect(types.every((type) => type.startsWith('computer.'))).toBe(true);
    expect(drift('OPERATION_DRIVER_METHOD', Object.keys(OPERATION_DRIVER_METHOD), types)).toEqual([]);
    // A command is not a lifecycle action: `run` never receives it, `exec` runs it (design §13).
    expect(driverMethodOf('computer.exec')).toBe('exec');
    expect(
      drift(
        'DriverAction',
        Object.keys(COMPUTER_ACTIONS),
        types.filter((type) => driverMethodOf(type) === 'run').map((type) => type.slice('computer.'.length)),
      ),
    ).toEqual([]);
    expect(Object.keys(COMPUTER_ACTIONS)).not.toContain('exec');
  });

  test('the long form of exec copies the short form’s schemas but for its longer time limits (design §13)', () => {
    const properties = (name: string) =>
      structuredClone((schemas(document)[name] as { properties: Record<string, unknown> }).properties);
    const without = (record: Record<string, unknown>, key: string) => {
      const { [key]: _, ...rest } = record;
      return rest;
    };
    expect(without(properties('LongExecution'), 'duration_ms')).toEqual(
      without(properties('Execution'), 'duration_ms'),
    );
    expect(without(properties('RunComputerRequest'), 'timeout_seconds')).toEqual(
      without(properties('ExecComputerRequest'), 'timeout_seconds'),
    );
  });

  test('the longest lifetime a request may set is the spec’s idle timeout maximum (design §4.1)', () => {
    for (const name of ['ComputerLifetimeRequest', 'LifetimeDefaults', 'ComputerLifetime']) {
      const properties = (schemas(document)[name] as { properties: Record<string, { maximum?: number }> })
        .properties;
      expect(properties.idle_timeout_seconds?.maximum).toBe(MAX_LIFETIME_SECONDS);
    }
  });

  test("key algorithms are the spec's KeyAlgorithm", () => {
    expect(drift('KeyAlgorithm', KEY_ALGORITHMS, specEnum('KeyAlgorithm'))).toEqual([]);
  });
});

/** One CHECK constraint of the live schema: `table.column`, and the values or bounds it allows. */
interface CheckConstraint {
  column: string;
  definition: string;
  values: string[];
}

/** Reads the value lists of the CHECK constraints (`col IN (...)`, `col = '...'`) of the current schema. */
async function checkConstraints(db: Database): Promise<CheckConstraint[]> {
  const { rows } = await db.query<{ table: string; definition: string }>(
    `SELECT rel.relname AS table, pg_get_constraintdef(con.oid) AS definition
       FROM pg_constraint con
       JOIN pg_class rel ON rel.oid = con.conrelid
       JOIN pg_namespace ns ON ns.oid = rel.relnamespace
      WHERE con.contype = 'c' AND ns.nspname = current_schema()
      ORDER BY rel.relname, con.conname`,
  );
  return rows.map(({ table, definition }) => {
    const column = /^CHECK \(+"?([a-z_]+)"?/.exec(definition)?.[1];
    if (!column) throw new Error(`cannot read the column of ${table}: ${definition}`);
    const values = [...definition.matchAll(/'((?:[^']|'')*)'::text/g)].map((m) => m[1]!.replace(/''/g, "'"));
    return { column: `${table}.${column}`, definition, values };
  });
}

/** CHECK constraints that hold a spec enum: `table.column` → the schema's name. */
const SPEC_ENUMS: Readonly<Record<string, string>> = {
  'principals.kind': 'PrincipalKind',
  'members.role': 'Role',
  'keys.algorithm': 'KeyAlgorithm',
  'keys.state': 'KeyState',
  'computers.state': 'ComputerState',
  'operations.state': 'OperationState',
  'computers.on_end': 'ComputerEndAction',
  'operations.trigger': 'OperationTrigger',
  'webhook_endpoints.status': 'WebhookEndpointStatus',
  'webhook_deliveries.status': 'WebhookDeliveryStatus',
  'snapshots.state': 'SnapshotState',
  'terminals.state': 'TerminalState',
};

/** CHECK constraints that hold an enum written inline in a schema's property: `table.column` → [schema, property]. */
const INLINE_ENUMS: Readonly<Record<string, readonly [string, string]>> = {
  'webhook_endpoints.disabled_reason': ['WebhookEndpoint', 'disabled_reason'],
  'webhook_attempts.outcome': ['WebhookAttempt', 'outcome'],
};

/** CHECK constraints on what the API never shows, and why the spec does not own them. */
const INTERNAL: Readonly<Record<string, string>> = {
  'server_signing_keys.algorithm': "the server's own token-signing keys (design §7), not a key resource",
  'server_signing_keys.state': 'active or retired signing keys, never returned by the API',
  'authorization_codes.code_challenge_method': 'PKCE S256 only (RFC 7636), fixed by design §7',
  'idempotency_keys.state': 'the state of an idempotency record (design §10)',
  'warm_containers.state':
    "a pooled container's place in the Docker driver's warm pool (design §4.3), never shown",
  'hosts.capacity_vcpus': 'a host of the fleet (design §4.4): an operator sets it with svc-server hosts',
  'hosts.capacity_memory_mib': 'a host of the fleet (design §4.4): an operator sets it with svc-server hosts',
  'hosts.capacity_computers': 'a host of the fleet (design §4.4): an operator sets it with svc-server hosts',
  'hosts.engine': "a host's Engine address (a local socket, or https with mutual TLS), never shown",
  'terminal_inbox.kind': "what another replica leaves for a PTY's holder (design §17), never shown",
};

/** The problems of the live schema's constraints against the spec: unclassified ones, value drift, range drift. */
function constraintDrift(constraints: CheckConstraint[], doc: OpenApiDocument): string[] {
  const problems: string[] = [];
  const progress = (schemas(doc).Operation as { properties: Record<string, Record<string, number>> })
    .properties.progress;
  for (const { column, definition, values } of constraints) {
    const schema = SPEC_ENUMS[column];
    const inline = INLINE_ENUMS[column];
    if (schema) problems.push(...drift(`${column} CHECK vs spec ${schema}`, values, specEnum(schema, doc)));
    else if (inline) {
      const [name, property] = inline;
      const owner = schemas(doc)[name] as { properties: Record<string, { enum?: string[] }> };
      problems.push(
        ...drift(
          `${column} CHECK vs spec ${name}.${property}`,
          values,
          owner.properties[property]?.enum ?? [],
        ),
      );
    } else if (column === 'operation_output.event') {
      // A command's output log holds the stream's events but `stream.ended`, which a server sends
      // when it ends a stream and never logs (design §14).
      const item = schemas(doc).OperationOutputStreamItem as { properties: { event: { enum: string[] } } };
      const logged = item.properties.event.enum.filter((event) => event !== 'stream.ended');
      problems.push(...drift(`${column} CHECK vs spec OperationOutputStreamItem.event`, values, logged));
    } else if (column === 'terminal_output.event') {
      // The same for a terminal's output log (design §17).
      const item = schemas(doc).TerminalOutputStreamItem as { properties: { event: { enum: string[] } } };
      const logged = item.properties.event.enum.filter((event) => event !== 'stream.ended');
      problems.push(...drift(`${column} CHECK vs spec TerminalOutputStreamItem.event`, values, logged));
    } else if (column === 'operations.progress') {
      const bounds = [...definition.matchAll(/[<>]= (\d+)/g)].map((m) => Number(m[1]));
      if (String(bounds) !== String([progress?.minimum, progress?.maximum]))
        problems.push(
          `${column}: CHECK ${definition}, the spec's Operation.progress is ${progress?.minimum}..${progress?.maximum}`,
        );
    } else if (!INTERNAL[column])
      problems.push(
        `${column}: CHECK ${definition} is neither mapped to a spec enum nor declared internal here`,
      );
  }
  for (const column of [
    ...Object.keys(SPEC_ENUMS),
    ...Object.keys(INLINE_ENUMS),
    ...Object.keys(INTERNAL),
    'operation_output.event',
    'terminal_output.event',
  ])
    if (!constraints.some((c) => c.column === column))
      problems.push(`${column}: no such CHECK constraint any more`);
  return problems;
}

describeEngines('database CHECK constraints hold the spec enums', (engine) => {
  let constraints: CheckConstraint[];
  beforeAll(async () => {
    constraints = await checkConstraints(await engine.open());
  });

  test('every CHECK constraint with a value list matches its spec enum or is declared internal', () => {
    expect(constraints.length).toBeGreaterThanOrEqual(Object.keys(SPEC_ENUMS).length);
    expect(constraintDrift(constraints, document)).toEqual([]);
  });

  test('the check fails, naming the column and value, when the spec gains a value or a constraint is unknown', () => {
    const changed = structuredClone(document);
    (schemas(changed).ComputerState as { enum: string[] }).enum.push('hibernating');
    (
      schemas(changed).Operation as { properties: { progress: { maximum: number } } }
    ).properties.progress.maximum = 1000;
    (
      schemas(changed).OperationOutputStreamItem as { properties: { event: { enum: string[] } } }
    ).properties.event.enum.push('progress');
    const extra = { column: 'computers.flavour', definition: "CHECK ((flavour = 'x'::text))", values: ['x'] };
    expect(constraintDrift([...constraints, extra], changed)).toEqual([
      "computers.state CHECK vs spec ComputerState: the spec has 'hibernating', the code does not",
      "operation_output.event CHECK vs spec OperationOutputStreamItem.event: the spec has 'progress', the code does not",
      expect.stringMatching(/^operations\.progress: CHECK .* Operation\.progress is 0\.\.1000$/),
      `computers.flavour: CHECK ${extra.definition} is neither mapped to a spec enum nor declared internal here`,
    ]);
  });
});
