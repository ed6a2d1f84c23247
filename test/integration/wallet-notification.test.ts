/**
 * OpenID4VCI 1.0 §11, the Notification Endpoint, against the wallet issuer on a real HTTP server: a
 * wallet's notification after a real credential request (Bearer and DPoP-bound tokens), and the spec's
 * errors for every kind of bad request. DPoP proofs are made with jose here, not with our code.
 */
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialNotice } from '../../src/issuance/notification.js';
import { MAX_NOTIFICATION_BYTES } from '../../src/issuance/notificationEndpoint.js';
import {
  credentialRequest,
  nonce,
  offer,
  PRE_AUTH,
  proof,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';

type KeyPair = { privateKey: CryptoKey; publicJwk: JWK };
const keyPair = async (): Promise<KeyPair> => {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey) };
};

let running: Running;
const notices: CredentialNotice[] = [];

beforeAll(async () => {
  running = await startIssuer({
    onNotification: async (notice) => {
      notices.push(notice);
    },
  });
});
afterAll(async () => {
  await running?.close();
});

const endpoint = (path: string) => `${running.baseUrl}/wallet/${path}`;

/** A wallet's credential with a Bearer token: the token and the notification_id of the Credential Response. */
async function issued(): Promise<{ accessToken: string; notificationId: string; stepId: string }> {
  const o = await offer(running);
  const token = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code });
  expect(token.status).toBe(200);
  const credential = await credentialRequest(
    running.baseUrl,
    token.body.access_token,
    await proof({ aud: `${running.baseUrl}/wallet`, nonce: await nonce(running.baseUrl) }),
  );
  expect(credential.status, JSON.stringify(credential.body)).toBe(200);
  expect(typeof credential.body.notification_id).toBe('string');
  return {
    accessToken: token.body.access_token,
    notificationId: credential.body.notification_id as string,
    stepId: o.stepId,
  };
}

async function notify(o: {
  accessToken?: string;
  scheme?: string;
  body: unknown;
  dpop?: string;
  contentType?: string;
  raw?: string;
}) {
  const response = await fetch(endpoint('notification'), {
    method: 'POST',
    headers: {
      ...(o.accessToken ? { authorization: `${o.scheme ?? 'Bearer'} ${o.accessToken}` } : {}),
      'content-type': o.contentType ?? 'application/json',
      ...(o.dpop ? { dpop: o.dpop } : {}),
    },
    body: o.raw ?? JSON.stringify(o.body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, string>) : undefined,
    challenge: response.headers.get('www-authenticate'),
  };
}

/** An RFC 9449 DPoP proof, made with jose. */
async function dpopProof(
  key: KeyPair,
  o: { htm: string; htu: string; nonce?: string; accessToken?: string; jti?: string; iat?: number },
): Promise<string> {
  return new SignJWT({
    htm: o.htm,
    htu: o.htu,
    jti: o.jti ?? randomUUID(),
    ...(o.nonce ? { nonce: o.nonce } : {}),
    ...(o.accessToken ? { ath: createHash('sha256').update(o.accessToken).digest('base64url') } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk })
    .setIssuedAt(o.iat)
    .sign(key.privateKey);
}

/** A credential fetched with a DPoP-bound token (the provider's nonces, as a HAIP wallet does). */
async function issuedWithDpop(key: KeyPair): Promise<{ accessToken: string; notificationId: string }> {
  const o = await offer(running);
  const post = (p: string) =>
    fetch(endpoint('token'), {
      method: 'POST',
      headers: { dpop: p },
      body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': o.code }),
    });
  const first = await post(await dpopProof(key, { htm: 'POST', htu: endpoint('token') }));
  const serverNonce = first.headers.get('dpop-nonce')!;
  const second = await post(await dpopProof(key, { htm: 'POST', htu: endpoint('token'), nonce: serverNonce }));
  const token = (await second.json()) as Record<string, string>;
  expect(token.token_type).toBe('DPoP');
  const credentialPost = async (dpopNonce: string) =>
    fetch(endpoint('credential'), {
      method: 'POST',
      headers: {
        authorization: `DPoP ${token.access_token}`,
        'content-type': 'application/json',
        dpop: await dpopProof(key, {
          htm: 'POST',
          htu: endpoint('credential'),
          nonce: dpopNonce,
          accessToken: token.access_token,
        }),
      },
      body: JSON.stringify({
        credential_configuration_id: 'EmployeeBadge',
        proofs: { jwt: [await proof({ aud: `${running.baseUrl}/wallet`, nonce: await nonce(running.baseUrl) })] },
      }),
    });
  let response = await credentialPost(second.headers.get('dpop-nonce') ?? serverNonce);
  if (response.status === 401 || response.status === 400)
    response = await credentialPost(response.headers.get('dpop-nonce') ?? serverNonce);
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return { accessToken: token.access_token, notificationId: body.notification_id as string };
}

describe('the notification endpoint (OpenID4VCI 1.0 §11)', () => {
  it('is advertised in the credential issuer metadata', async () => {
    const metadata = (await (
      await fetch(`${running.baseUrl}/.well-known/openid-credential-issuer/wallet`)
    ).json()) as Record<string, unknown>;
    expect(metadata.notification_endpoint).toBe(`${running.baseUrl}/wallet/notification`);
  });

  for (const event of ['credential_accepted', 'credential_failure', 'credential_deleted'] as const) {
    it(`takes ${event} with the credential's access token (204) and reflects it once, without secrets`, async () => {
      const { accessToken, notificationId, stepId } = await issued();
      const answer = await notify({
        accessToken,
        body: { notification_id: notificationId, event, event_description: 'stored in the wallet' },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(204);
      const mine = notices.filter((n) => n.stepId === stepId);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ event, credentialType: 'EmployeeBadge', description: 'stored in the wallet' });
      const text = JSON.stringify(mine[0]);
      for (const secret of [accessToken, notificationId, 'Ada', 'Lovelace']) expect(text).not.toContain(secret);

      // first wins: a repeat (same or another event) is answered 204 and reflects nothing
      expect(
        (await notify({ accessToken, body: { notification_id: notificationId, event: 'credential_deleted' } })).status,
      ).toBe(204);
      expect(notices.filter((n) => n.stepId === stepId)).toHaveLength(1);
    });
  }

  it('takes a notification with a DPoP-bound token and a DPoP proof of its key', async () => {
    const key = await keyPair();
    const { accessToken, notificationId } = await issuedWithDpop(key);
    const before = notices.length;
    const answer = await notify({
      accessToken,
      scheme: 'DPoP',
      dpop: await dpopProof(key, { htm: 'POST', htu: endpoint('notification'), accessToken }),
      body: { notification_id: notificationId, event: 'credential_accepted' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(204);
    expect(notices.length).toBe(before + 1);
  });

  describe('bad requests get the spec codes', () => {
    it('no access token: 401 invalid_token with a challenge', async () => {
      const { notificationId } = await issued();
      const answer = await notify({ body: { notification_id: notificationId, event: 'credential_accepted' } });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: 'invalid_token' });
      expect(answer.challenge).toMatch(/^Bearer/);
    });

    it('an unknown access token: 401 invalid_token', async () => {
      const { notificationId } = await issued();
      const answer = await notify({
        accessToken: 'not-a-token-we-issued',
        body: { notification_id: notificationId, event: 'credential_accepted' },
      });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: 'invalid_token' });
      expect(answer.challenge).toBe('Bearer error="invalid_token"');
    });

    it('an unknown notification_id: 400 invalid_notification_id', async () => {
      const { accessToken } = await issued();
      const answer = await notify({
        accessToken,
        body: { notification_id: 'A'.repeat(43), event: 'credential_accepted' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_notification_id' });
    });

    it("another token's notification_id: 400 invalid_notification_id, and nothing is reflected", async () => {
      const a = await issued();
      const b = await issued();
      const answer = await notify({
        accessToken: b.accessToken,
        body: { notification_id: a.notificationId, event: 'credential_deleted' },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_notification_id' });
      expect(notices.filter((n) => n.stepId === a.stepId)).toHaveLength(0);
    });

    it('malformed JSON, not an object, not JSON at all: 400 invalid_notification_request', async () => {
      const { accessToken } = await issued();
      for (const raw of ['{"notification_id": ', '[]', '"x"']) {
        const answer = await notify({ accessToken, body: undefined, raw });
        expect(answer.status, raw).toBe(400);
        expect(answer.body).toMatchObject({ error: 'invalid_notification_request' });
      }
      const form = await notify({
        accessToken,
        body: undefined,
        raw: 'notification_id=x&event=credential_accepted',
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(form.status).toBe(400);
      expect(form.body).toMatchObject({ error: 'invalid_notification_request' });
    });

    it('an unknown or missing event, a missing id, a bad event_description: 400 invalid_notification_request naming the parameter', async () => {
      const { accessToken, notificationId } = await issued();
      const cases: [unknown, string][] = [
        [{ notification_id: notificationId, event: 'credential_lost' }, 'event'],
        [{ notification_id: notificationId }, 'event'],
        [{ event: 'credential_accepted' }, 'notification_id'],
        [{ notification_id: 42, event: 'credential_accepted' }, 'notification_id'],
        [
          { notification_id: notificationId, event: 'credential_accepted', event_description: 'quote " inside' },
          'event_description',
        ],
        [
          { notification_id: notificationId, event: 'credential_accepted', event_description: 'x'.repeat(501) },
          'event_description',
        ],
      ];
      for (const [body, parameter] of cases) {
        const answer = await notify({ accessToken, body });
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body?.error).toBe('invalid_notification_request');
        expect(answer.body?.error_description).toContain(parameter);
      }
    });

    it('an oversized body: 400 invalid_notification_request', async () => {
      const { accessToken, notificationId } = await issued();
      const answer = await notify({
        accessToken,
        body: {
          notification_id: notificationId,
          event: 'credential_accepted',
          padding: 'x'.repeat(MAX_NOTIFICATION_BYTES),
        },
      });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: 'invalid_notification_request' });
    });

    it('a DPoP-bound token: without a proof, as Bearer, with a proof of another key, another URL, another token, a stale or replayed proof', async () => {
      const key = await keyPair();
      const { accessToken, notificationId } = await issuedWithDpop(key);
      const body = { notification_id: notificationId, event: 'credential_accepted' };
      const htu = endpoint('notification');

      const noProof = await notify({ accessToken, scheme: 'DPoP', body });
      expect([noProof.status, noProof.body?.error]).toEqual([401, 'invalid_dpop_proof']);
      expect(noProof.challenge).toMatch(/^DPoP error="invalid_dpop_proof"/);

      const asBearer = await notify({
        accessToken,
        scheme: 'Bearer',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu, accessToken }),
      });
      expect([asBearer.status, asBearer.body?.error]).toEqual([401, 'invalid_token']);

      const otherKey = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(await keyPair(), { htm: 'POST', htu, accessToken }),
      });
      expect([otherKey.status, otherKey.body?.error]).toEqual([401, 'invalid_token']);

      const otherUrl = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu: endpoint('credential'), accessToken }),
      });
      expect([otherUrl.status, otherUrl.body?.error]).toEqual([401, 'invalid_dpop_proof']);
      expect(otherUrl.body?.error_description).toContain('htu');

      const otherMethod = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'GET', htu, accessToken }),
      });
      expect([otherMethod.status, otherMethod.body?.error_description]).toEqual([401, expect.stringContaining('htm')]);

      const noAth = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu }),
      });
      expect([noAth.status, noAth.body?.error_description]).toEqual([401, expect.stringContaining('ath')]);

      const stale = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu, accessToken, iat: Math.floor(Date.now() / 1000) - 3600 }),
      });
      expect([stale.status, stale.body?.error_description]).toEqual([401, expect.stringContaining('iat')]);

      const jti = randomUUID();
      const first = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu, accessToken, jti }),
      });
      expect(first.status, JSON.stringify(first.body)).toBe(204);
      const replay = await notify({
        accessToken,
        scheme: 'DPoP',
        body,
        dpop: await dpopProof(key, { htm: 'POST', htu, accessToken, jti }),
      });
      expect([replay.status, replay.body?.error_description]).toEqual([401, expect.stringContaining('jti')]);
    });

    it('a Bearer token sent with the DPoP scheme: 401 invalid_token', async () => {
      const { accessToken, notificationId } = await issued();
      const answer = await notify({
        accessToken,
        scheme: 'DPoP',
        body: { notification_id: notificationId, event: 'credential_accepted' },
      });
      expect([answer.status, answer.body?.error]).toEqual([401, 'invalid_token']);
    });
  });
});
