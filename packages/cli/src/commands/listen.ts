// `svc listen <workspace> --forward-to <url>`: webhooks during development without a public address.
// svc follows the workspace's event stream (`@svc/client/streams`, resumed across drops) and POSTs each
// event, signed as a real delivery is (Standard Webhooks headers, `webhook-id` the event id, the event
// JSON as body; `@svc/client/webhooks`), from this machine to a receiver it can reach.
import { type Command, Option } from 'commander';
import { apiClient, type Context } from '../credentials.js';
import { CliError, exitCode, RemoteExit } from '../exit-codes.js';

/**
 * How long one forward may take, as a real delivery's attempt (design §16): 15 s.
 *
 * @example
 * fetch(url, { signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
 */
export const FORWARD_TIMEOUT_MS = 15_000;

const help = `
svc follows the workspace's events (as svc workspaces events prints them) and forwards each one from
THIS MACHINE to your receiver: the service never calls the URL, so it needs no public address
(http://127.0.0.1:3000/webhooks is fine). Each forward is a POST signed exactly as a real delivery
(webhook-id = the event id, webhook-timestamp, webhook-signature v1,…; the body is the event JSON),
with --secret, or a whsec_ secret made at start and printed once on stderr: verify with it
(@svc/client/webhooks verifyWebhook). One line per event on stdout: time, type, id, #its place in the
log, and the receiver's status and duration, or the error. A receiver's error or a forward past 15 s is printed, and listening
goes on; nothing is retried. Ctrl-C stops (exit 130).

  svc listen dev --forward-to http://127.0.0.1:3000/webhooks
  svc listen dev --forward-to http://127.0.0.1:3000/webhooks --events computer.created,computer.updated
  svc listen dev --forward-to http://127.0.0.1:3000/webhooks --after 1842   # replay what came after event 1842

Without --after, forwarding starts with the next change. --after <n> first forwards the events after
place n of the log (each line shows #n: pass the last one you saw to pick up where you stopped;
--after 0 replays all the log keeps, 7 days by default), then goes on with new ones.

For a receiver with a public https URL, create a real endpoint: svc webhooks create-endpoint.
`;

/** The flags of `svc listen`. */
interface ListenFlags {
  forwardTo: string;
  events?: string;
  secret?: string;
  after?: string;
}

/** An event as the workspace stream yields it: `data` is the event object a delivery's body carries. */
interface StreamedEvent {
  event: string;
  id: string;
  data: { id?: unknown };
}

/**
 * Adds `svc listen <workspace> --forward-to <url> [--events …] [--secret whsec_…]`.
 *
 * @example
 * addListenCommand(program, () => context);
 */
export function addListenCommand(program: Command, context: () => Context): Command {
  return program
    .command('listen')
    .description(
      "forward a workspace's events, signed like webhooks, from this machine to a local receiver (no public URL needed)",
    )
    .argument('<workspace>', 'the workspace id or name')
    .addOption(
      new Option(
        '--forward-to <url>',
        'the http(s) URL to POST each event to, from this machine (e.g. http://127.0.0.1:3000/webhooks)',
      ).makeOptionMandatory(),
    )
    .option('--events <types>', 'only these event types, comma-separated (default: all)')
    .option('--secret <whsec>', 'the secret to sign with (default: a new one, printed once on stderr)')
    .option(
      '--after <n>',
      "first forward the events after place n of the workspace's log (each line shows #n; 0: all it keeps)",
    )
    .addHelpText('after', help)
    .action(async (workspace: string, flags: ListenFlags) => {
      await listen(context(), workspace, flags);
    });
}

function targetOf(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError('usage', 'invalid_url', `--forward-to: an http(s) URL, not "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(
      'usage',
      'invalid_url',
      `--forward-to: an http(s) URL, not ${url.protocol} "${value}".`,
    );
  return url;
}

async function typesOf(value: string | undefined): Promise<Set<string> | undefined> {
  if (value === undefined) return undefined;
  const { webhookEventTypes } = await import('@svc/contract/browser');
  const known = new Set<string>(webhookEventTypes);
  const types = value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.filter((t) => !known.has(t));
  if (types.length === 0 || unknown.length > 0)
    throw new CliError(
      'usage',
      'invalid_events',
      `--events: event types, comma-separated${unknown.length ? `; not ${unknown.join(', ')}` : ''} (known: ${[...known].join(', ')}).`,
    );
  return new Set(types);
}

/** Stops on Ctrl-C (SIGINT) or on `io.signal` (tests). */
function interruption(context: Context): { signal: AbortSignal; dispose(): void } {
  const stop = new AbortController();
  const onSigint = () => stop.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  const signal = context.io.signal ? AbortSignal.any([stop.signal, context.io.signal]) : stop.signal;
  return { signal, dispose: () => process.off('SIGINT', onSigint) };
}

/** The message of a failed forward: the cause of fetch's `TypeError` says what went wrong. */
function reasonOf(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`;
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error);
}

/**
 * The context with a fetch that calls `opened` once, when the first event stream's answer has arrived
 * (status 200, its headers read): from then on the server has fixed where the stream starts. Reconnects
 * after a drop resume by event id, so only the first answer counts.
 */
function whenStreamOpens(context: Context, opened: () => void): Context {
  const fetch = context.io.fetch ?? ((request: Request) => globalThis.fetch(request));
  let once: (() => void) | undefined = opened;
  return {
    ...context,
    io: {
      ...context.io,
      fetch: async (request) => {
        const response = await fetch(request);
        if (
          once &&
          response.status === 200 &&
          /^text\/event-stream\b/i.test(response.headers.get('Content-Type') ?? '')
        ) {
          once();
          once = undefined;
        }
        return response;
      },
    },
  };
}

async function listen(context: Context, workspace: string, flags: ListenFlags): Promise<void> {
  const target = targetOf(flags.forwardTo);
  if (flags.after !== undefined && !/^[0-9]{1,20}$/.test(flags.after))
    throw new CliError(
      'usage',
      'invalid_after',
      `--after: a place in the log (digits, as #n shows), not "${flags.after}".`,
    );
  const types = await typesOf(flags.events);
  const { generateWebhookSecret, signWebhook } = await import('@svc/client/webhooks');
  if (flags.secret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(flags.secret))
    throw new CliError('usage', 'invalid_secret', '--secret: whsec_ and base64, as svc makes them.');
  const { io } = context;
  const secret = flags.secret ?? generateWebhookSecret();
  // "forwarding …" is a promise that what changes from now on is forwarded: without --after the stream
  // starts at the change after the one the server has when it answers, so the line waits for that answer.
  const client = await apiClient(
    whenStreamOpens(context, () =>
      io.stderr.write(
        `svc: forwarding ${workspace}'s ${types ? [...types].join(', ') : 'events'} from this machine to ${target.href}; Ctrl-C to stop\n`,
      ),
    ),
  );
  const { stream } = await import('@svc/client/streams');
  if (flags.secret === undefined)
    io.stderr.write(
      `svc: signing with ${secret}\nsvc: your receiver can verify with this secret (pass it as --secret to keep it)\n`,
    );
  const interrupt = interruption(context);
  try {
    const events = stream(client, 'streamWorkspaceEvents', {
      path: { workspace },
      ...(flags.after === undefined ? {} : { query: { after: flags.after } }),
      signal: interrupt.signal,
    }) as AsyncGenerator<StreamedEvent>;
    for await (const event of events) {
      if (types && !types.has(event.event)) continue;
      const id = typeof event.data.id === 'string' ? event.data.id : event.id;
      const body = JSON.stringify(event.data);
      const headers = await signWebhook({ id, body, secrets: secret, at: new Date(context.now()) });
      const started = performance.now();
      // The stream's id is the event's place in the workspace's log: what --after takes.
      const line = `${new Date(context.now()).toISOString()} ${event.event} ${id} #${event.id}`;
      try {
        const response = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
          redirect: 'manual',
          signal: AbortSignal.any([interrupt.signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
        });
        await response.body?.cancel();
        io.stdout.write(`${line} -> ${response.status} (${Math.round(performance.now() - started)} ms)\n`);
      } catch (error) {
        if (interrupt.signal.aborted) throw error;
        io.stdout.write(
          `${line} -> error: ${reasonOf(error)} (${Math.round(performance.now() - started)} ms)\n`,
        );
      }
    }
  } catch (error) {
    if (!interrupt.signal.aborted) throw error;
    io.stderr.write('svc: stopped listening.\n');
    throw new RemoteExit(exitCode('interrupted'));
  } finally {
    interrupt.dispose();
  }
}
