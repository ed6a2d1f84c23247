import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startTestService, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm } from '../helpers/rp.js';
import { newWallet } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';

/**
 * OpenID4VCI 1.0 §11 as an External Client's relying party sees it: after flow.completed, the wallet's
 * notification arrives as credential.accepted (the dev wallet sends credential_accepted once it stored the
 * credential) or credential.failed (credential_failure, credential_deleted), at a real webhook receiver
 * that verifies each delivery; the audit line records the wallet's event. Nothing secret in either.
 */
const CLIENT = { id: 'ext-rp', secret: 'ext-rp-secret-0123456789abc' };
const badge = { FirstName: 'Zephyrine', LastName: 'Quillfeather' };

const secret = webhookSecret();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;
const lines: string[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestService(
    {
      clients: [
        {
          clientId: CLIENT.id,
          clientName: 'External RP',
          clientSecret: CLIENT.secret,
          redirectUris: [REDIRECT],
          scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External'],
          webhook: { url: receiver.url, secret },
        },
      ],
    },
    { logger: createLogger('info', sink) },
  );
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

/** An External issuance flow up to its prompt: the wallet link on the page. */
async function startIssuance(): Promise<{ state: string; offer: string }> {
  const state = randomBytes(8).toString('hex');
  const { challenge } = pkcePair();
  const par = await postForm(`${t.url}/v2.0/oidc/par`, {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    state,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'openid issue.EmployeeBadge External',
    id_token_hint: await makeHint({ clientId: CLIENT.id, secret: CLIENT.secret, audience: t.url, claims: badge }),
  });
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  const prompt = await new Browser(REDIRECT).follow(
    `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`,
  );
  return { state, offer: offerFromPage(prompt.html!) };
}

/** Secrets of the flow that must appear in no event and no log line. */
const secretsOf = (...extra: string[]) => [badge.FirstName, badge.LastName, CLIENT.secret, ...extra];

describe('credential.accepted and credential.failed (OpenID4VCI notifications in External flows)', () => {
  it('the dev wallet stores the credential and says so: credential.accepted after flow.completed, and an audit line', async () => {
    const flow = await startIssuance();
    const seen: { token?: string; notificationId?: string } = {};
    // the wallet's own requests, read (not changed) to check that their secrets go nowhere
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = String(input);
      if (url.endsWith('/wallet/token'))
        seen.token = ((await response.clone().json()) as { access_token: string }).access_token;
      if (url.endsWith('/wallet/credential'))
        seen.notificationId = ((await response.clone().json()) as { notification_id: string }).notification_id;
      return response;
    };
    await (await newWallet()).receive(flow.offer, { fetch: watching });
    expect(seen.notificationId).toBeTruthy();

    const completed = await receiver.next(
      (h) => h.payload.data.state === flow.state && h.payload.type === 'flow.completed',
    );
    const accepted = await receiver.next(
      (h) => h.payload.data.state === flow.state && h.payload.type === 'credential.accepted',
    );
    expect(accepted.payload.data).toEqual({
      state: flow.state,
      client_id: CLIENT.id,
      flow: 'issuance',
      wallet_event: 'credential_accepted',
    });
    expect(completed.id).not.toBe(accepted.id);
    for (const s of secretsOf(seen.token!, seen.notificationId!)) expect(accepted.raw).not.toContain(s);

    const audit = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.audit === 'credential_notification');
    expect(audit.at(-1)).toMatchObject({
      client: CLIENT.id,
      flow: 'issuance',
      external: true,
      credentialType: 'EmployeeBadge',
      event: 'credential_accepted',
    });
    const log = lines.join('\n');
    for (const s of secretsOf(seen.token!, seen.notificationId!)) expect(log).not.toContain(s);
  });

  for (const event of ['credential_failure', 'credential_deleted'] as const) {
    it(`a wallet that sends ${event}: credential.failed naming the wallet's event, once`, async () => {
      const flow = await startIssuance();
      const seen: { token?: string; notificationId?: string; endpoint?: string } = {};
      // this wallet sends its own notification below instead of the dev wallet's credential_accepted
      const wallet: typeof fetch = async (input, init) => {
        const url = String(input);
        if (url.endsWith('/wallet/notification')) {
          seen.endpoint = url;
          return new Response(null, { status: 204 });
        }
        const response = await fetch(input, init);
        if (url.endsWith('/wallet/token'))
          seen.token = ((await response.clone().json()) as { access_token: string }).access_token;
        if (url.endsWith('/wallet/credential'))
          seen.notificationId = ((await response.clone().json()) as { notification_id: string }).notification_id;
        return response;
      };
      await (await newWallet()).receive(flow.offer, { fetch: wallet });
      expect(seen.endpoint).toBe(`${t.url}/wallet/notification`);

      const notify = (body: Record<string, string>) =>
        fetch(seen.endpoint!, {
          method: 'POST',
          headers: { authorization: `Bearer ${seen.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect(
        (await notify({ notification_id: seen.notificationId!, event, event_description: 'storage full' })).status,
      ).toBe(204);
      expect((await notify({ notification_id: seen.notificationId!, event: 'credential_accepted' })).status).toBe(204);

      const failed = await receiver.next(
        (h) => h.payload.data.state === flow.state && h.payload.type === 'credential.failed',
      );
      expect(failed.payload.data).toEqual({
        state: flow.state,
        client_id: CLIENT.id,
        flow: 'issuance',
        wallet_event: event,
        event_description: 'storage full',
      });
      for (const s of secretsOf(seen.token!, seen.notificationId!)) expect(failed.raw).not.toContain(s);
      // first wins: the later credential_accepted sends nothing
      await new Promise((r) => setTimeout(r, 500));
      const types = receiver.received.filter((h) => h.payload.data.state === flow.state).map((h) => h.payload.type);
      expect(types.sort()).toEqual(['credential.failed', 'flow.completed']);
    });
  }
});
