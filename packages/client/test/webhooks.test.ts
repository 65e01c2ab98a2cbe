// `@svc/client/webhooks`: the verifier against `standardwebhooks`' own signatures (what the server
// sends) and its published test vector, and every reason it refuses a delivery.
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from '../src/webhooks.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_dGhlLW90aGVyLXNlY3JldC1vZi10aGUtdGVzdHMtMDA=';
const AT = new Date('2026-11-10T12:00:05Z');
const EVENT = {
  id: '01m6pr3y1c5h8v0qd7k2ne9w4tb',
  sequence: 42,
  type: 'computer.created',
  workspace_id: '01m6pr3y1c5h8v0qd7k2ne9w4ta',
  created_at: '2026-11-10T12:00:04Z',
  computer: { id: '01m6pr3y1c5h8v0qd7k2ne9w4tc', name: 'box', state: 'creating' },
};
const BODY = JSON.stringify(EVENT);

/** The headers the server sends: `standardwebhooks`' `Webhook.sign`, one signature per secret. */
function served(secrets: string[], body = BODY, at = AT, id = EVENT.id): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

async function refusal(run: Promise<unknown>): Promise<WebhookVerificationReason> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe('verifyWebhook', () => {
  test('accepts a delivery signed by standardwebhooks and returns the typed event', async () => {
    const event = await verifyWebhook({ secrets: SECRET, headers: served([SECRET]), body: BODY, now: AT });
    expect(event).toEqual(EVENT);
    if (event.type === 'computer.created') expect(event.computer.name).toBe('box');
    // The same as bytes, and with a Headers object (case does not matter).
    const headers = new Headers(served([SECRET]));
    const bytes = new TextEncoder().encode(BODY);
    expect(await verifyWebhook({ secrets: [SECRET], headers, body: bytes, now: AT })).toEqual(EVENT);
  });

  test('the published Standard Webhooks test vector', async () => {
    const body = '{"test": 2432232314}';
    const headers = {
      'Webhook-Id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'Webhook-Timestamp': '1614265330',
      'Webhook-Signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const now = new Date(1614265330 * 1000);
    // It passes every check but the last: the vector's body is not a workspace event.
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body, now }))).toBe('bad_payload');
    const tampered = { ...headers, 'Webhook-Signature': 'v1,g1hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers: tampered, body, now }))).toBe(
      'bad_signature',
    );
    const signed = await signWebhook({ id: headers['Webhook-Id'], body, secrets: SECRET, at: now });
    expect(signed['webhook-signature']).toBe(headers['Webhook-Signature']);
  });

  test('a tampered body, a wrong secret and an unknown version are bad_signature', async () => {
    const headers = served([SECRET]);
    const tampered = BODY.replace('"box"', '"bot"');
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: tampered, now: AT }))).toBe(
      'bad_signature',
    );
    expect(await refusal(verifyWebhook({ secrets: OTHER, headers, body: BODY, now: AT }))).toBe(
      'bad_signature',
    );
    const v2 = { ...headers, 'webhook-signature': headers['webhook-signature']!.replace('v1,', 'v2,') };
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers: v2, body: BODY, now: AT }))).toBe(
      'bad_signature',
    );
    // Another id or timestamp than the one signed.
    const otherId = { ...headers, 'webhook-id': 'msg_other' };
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers: otherId, body: BODY, now: AT }))).toBe(
      'bad_signature',
    );
  });

  test('a timestamp more than 5 minutes old or ahead is refused; within is accepted', async () => {
    const headers = served([SECRET]);
    const later = (seconds: number) => new Date(AT.getTime() + seconds * 1000);
    expect(await verifyWebhook({ secrets: SECRET, headers, body: BODY, now: later(300) })).toEqual(EVENT);
    expect(await verifyWebhook({ secrets: SECRET, headers, body: BODY, now: later(-300) })).toEqual(EVENT);
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: BODY, now: later(301) }))).toBe(
      'timestamp_too_old',
    );
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: BODY, now: later(-301) }))).toBe(
      'timestamp_too_new',
    );
    const wide = { secrets: SECRET, headers, body: BODY, now: later(3600), toleranceSeconds: 3600 };
    expect(await verifyWebhook(wide)).toEqual(EVENT);
    // Without `now`, the clock: a delivery signed a day ago is old.
    expect(
      await refusal(
        verifyWebhook({
          secrets: SECRET,
          headers: served([SECRET], BODY, new Date(Date.now() - 86_400_000)),
          body: BODY,
        }),
      ),
    ).toBe('timestamp_too_old');
  });

  test('rotation: while both secrets are given, a delivery signed with either (or both) is accepted', async () => {
    const both = [SECRET, OTHER];
    for (const signedWith of [[SECRET], [OTHER], [OTHER, SECRET]]) {
      const headers = served(signedWith);
      expect(await verifyWebhook({ secrets: both, headers, body: BODY, now: AT })).toEqual(EVENT);
    }
    // Once the old secret is dropped, its signature alone no longer passes.
    expect(
      await refusal(verifyWebhook({ secrets: [OTHER], headers: served([SECRET]), body: BODY, now: AT })),
    ).toBe('bad_signature');
  });

  test('a missing or malformed header is missing_header', async () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers = served([SECRET]);
      delete headers[name];
      expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: BODY, now: AT }))).toBe(
        'missing_header',
      );
    }
    const headers = { ...served([SECRET]), 'webhook-timestamp': '2026-11-10T12:00:05Z' };
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: BODY, now: AT }))).toBe(
      'missing_header',
    );
  });

  test('a signed body that is not an event (or not this one) is bad_payload', async () => {
    for (const body of [
      'not json',
      '[1,2]',
      '{"id":"01m6pr3y1c5h8v0qd7k2ne9w4tb"}',
      JSON.stringify({ ...EVENT, id: 'x' }),
    ]) {
      const headers = served([SECRET], body);
      expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body, now: AT }))).toBe('bad_payload');
    }
    const invalidUtf8 = new Uint8Array([0xff, 0xfe]);
    const headers = await signWebhook({ id: EVENT.id, body: invalidUtf8, secrets: SECRET, at: AT });
    expect(await refusal(verifyWebhook({ secrets: SECRET, headers, body: invalidUtf8, now: AT }))).toBe(
      'bad_payload',
    );
  });
});

describe('signWebhook and generateWebhookSecret', () => {
  test('sign as standardwebhooks does, one signature per secret, and it verifies them', async () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = await signWebhook({ id: EVENT.id, body: BODY, secrets: [secret, SECRET], at: AT });
    expect(headers).toEqual(served([secret, SECRET]));
    // And standardwebhooks' verifier (which reads the clock) accepts what it signs now.
    const now = await signWebhook({ id: EVENT.id, body: BODY, secrets: secret });
    expect(new Webhook(secret).verify(BODY, now)).toEqual(EVENT);
  });

  test('a secret that is not base64 is a caller error, not a refusal', async () => {
    await expect(
      verifyWebhook({ secrets: 'whsec_not base64!', headers: served([SECRET]), body: BODY, now: AT }),
    ).rejects.toThrow(TypeError);
  });
});
