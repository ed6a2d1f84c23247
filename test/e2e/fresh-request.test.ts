import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { startTestService, testConfig, REDIRECT, SECRETS, type TestService } from '../helpers/service.js';
import { Browser, makeHint, pkcePair, postForm } from '../helpers/rp.js';
import {
  holderCompletesIssuance,
  newWallet,
  pushAuthorization,
  redeemCode,
  requestFromPage,
} from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { MAX_REQUESTS_PER_STEP } from '../../src/interaction/kinds/presentation.js';

/**
 * Issue 36, "a way out": a wallet that fetched the presentation request and went silent, or answered that
 * it could not take it (an error other than access_denied), leaves the prompt offering a fresh request
 * (new QR code and link) within the same interaction. The retired request cannot be answered any more;
 * the relying party gets one outcome: the fresh request's, or the refusal when the holder gives up.
 */
const EXTERNAL = 'external-rp';
const EXTERNAL_SECRET = 'external-rp-secret-0123456789';
const secret = webhookSecret();
const badge = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;
let wallet: DevWallet;

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
  const defaults = testConfig(0);
  t = await startTestService({
    // one second of silence after the wallet fetched the request is a stall here (30 s by default)
    verifier: { ...(defaults.verifier as object), freshRequestAfter: 1 },
    clients: [
      ...(defaults.clients as object[]),
      {
        clientId: EXTERNAL,
        clientName: 'External RP',
        clientSecret: EXTERNAL_SECRET,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret },
      },
    ],
  });
  wallet = await newWallet();
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { ...badge, PinCode: '1234' },
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope: 'openid issue.EmployeeBadge',
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'issue',
    nonce: 'n-issue',
  });
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet, pin: '1234' });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

interface Prompt {
  browser: Browser;
  promptUrl: string;
  link: string;
  verifier?: string;
  state: string;
}

/** The relying party asks for an EmployeeBadge (Version 2 PAR), the holder's browser lands on the prompt. */
async function startVerification(clientId = 'issuer-pkce', extraScope = ''): Promise<Prompt> {
  const { verifier, challenge } = pkcePair();
  const state = `st-${Math.random().toString(36).slice(2)}`;
  const { authorizeUrl } = await pushAuthorization(t.url, {
    client_id: clientId,
    ...(clientId === EXTERNAL ? { client_secret: EXTERNAL_SECRET } : {}),
    scope: `openid EmployeeBadge${extraScope}`,
    state,
    nonce: 'n-verify',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  expect(prompt.res?.status).toBe(200);
  return { browser, promptUrl: prompt.final, link: requestFromPage(prompt.html!), verifier, state };
}

/** A wallet that fetches the request object and says nothing: what it learnt (response_uri, state). */
async function silentWallet(link: string): Promise<{ responseUri: string; state: string }> {
  const res = await fetch(new URL(link).searchParams.get('request_uri')!);
  expect(res.status).toBe(200);
  const payload = decodeJwt((await res.text()).trim());
  return { responseUri: String(payload.response_uri), state: String(payload.state) };
}

const statusOf = async (p: Prompt) =>
  (await (await p.browser.get(`${p.promptUrl}/status`, 'application/json')).json()) as Record<string, unknown>;

/** The holder presses "Get a new code": POST with the interaction's cookie, back to the prompt. */
async function askFresh(p: Prompt): Promise<string> {
  const res = await fetch(`${p.promptUrl}/fresh`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: [...p.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
  });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(p.promptUrl);
  const page = await p.browser.follow(p.promptUrl);
  return requestFromPage(page.html!);
}

/** The wallet's fetch, its answer to the verifier held until `gate` (a wallet that takes its time). */
const answeringAfter =
  (gate: Promise<unknown>): typeof fetch =>
  async (input, init) => {
    if (String(input instanceof Request ? input.url : input).endsWith('/vp/response')) await gate;
    return fetch(input, init);
  };

const waitForStall = () => new Promise((resolve) => setTimeout(resolve, 1_200));

describe('a fresh request after the wallet went silent (issue 36)', () => {
  it("reads stalled after the wallet held the request; a fresh one replaces it, the old one cannot be answered, and the relying party gets the fresh one's claims", async () => {
    const p = await startVerification();
    expect(await askFresh(p)).toBe(p.link); // nothing to replace while no wallet has the request
    const silent = await silentWallet(p.link);
    expect(await statusOf(p)).toEqual({ status: 'scanned' });
    await waitForStall();
    expect(await statusOf(p)).toEqual({ status: 'stalled' });

    const fresh = await askFresh(p);
    expect(fresh).not.toBe(p.link);
    expect(await statusOf(p)).toEqual({ status: 'pending' });
    // the retired request's late answer is refused, and changes nothing
    const late = await postForm(silent.responseUri, { state: silent.state, error: 'access_denied' });
    expect(late.status).toBe(400);
    expect(late.body.error_description).toMatch(/^state: unknown, expired or already answered/);
    expect(await statusOf(p)).toEqual({ status: 'pending' });

    expect((await wallet.present(fresh)).status).toBe(200);
    const done = await p.browser.follow(`${p.promptUrl}/continue`);
    const callback = new URL(done.final);
    expect(callback.searchParams.get('state')).toBe(p.state);
    const claims = await redeemCode(t.url, { code: callback.searchParams.get('code')!, verifier: p.verifier });
    expect(claims).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace' });
  });

  it('a fresh request posted from another site is refused (403) and leaves the stalled request in place (Origin, Fetch Metadata: src/http/sameOrigin.ts)', async () => {
    const p = await startVerification();
    await silentWallet(p.link);
    await waitForStall();
    const cookie = [...p.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const crossSite: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of crossSite) {
      const res = await fetch(`${p.promptUrl}/fresh`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, accept: 'text/html', ...headers },
      });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.text()).toContain('This was not sent from this page');
    }
    expect(await statusOf(p)).toEqual({ status: 'stalled' });
    expect(requestFromPage((await p.browser.follow(p.promptUrl)).html!)).toBe(p.link);
    // our own page's form (Origin null under no-referrer, Sec-Fetch-Site same-origin) still gets one
    const own = await fetch(`${p.promptUrl}/fresh`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: 'null', 'sec-fetch-site': 'same-origin' },
    });
    expect(own.status).toBe(303);
    expect(requestFromPage((await p.browser.follow(p.promptUrl)).html!)).not.toBe(p.link);
  });

  it('a wallet that answers after a pause keeps its request: a fresh one is no longer offered', async () => {
    const p = await startVerification();
    const answered = await wallet.present(p.link, { fetch: answeringAfter(waitForStall()) });
    expect(answered.status).toBe(200);
    expect(await askFresh(p)).toBe(p.link);
    const done = await p.browser.follow(`${p.promptUrl}/continue`);
    expect(new URL(done.final).searchParams.get('code')).toBeTruthy();
  });

  it("a fresh request taken while the wallet still holds the old one wins: the wallet's answer then is refused", async () => {
    const p = await startVerification();
    let freshDone!: () => void;
    const gate = new Promise<void>((resolve) => (freshDone = resolve));
    const late = wallet.present(p.link, { fetch: answeringAfter(gate) });
    await waitForStall();
    const fresh = await askFresh(p);
    expect(fresh).not.toBe(p.link);
    freshDone();
    expect(await late).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await statusOf(p)).toEqual({ status: 'pending' });
    expect((await wallet.present(fresh)).status).toBe(200);
    const done = await p.browser.follow(`${p.promptUrl}/continue`);
    expect(new URL(done.final).searchParams.get('code')).toBeTruthy();
  });

  it('of concurrent fresh requests one wins, and a prompt makes at most five requests', async () => {
    const p = await startVerification();
    await silentWallet(p.link);
    await waitForStall();
    const links = await Promise.all([askFresh(p), askFresh(p)]);
    // the loser may reload before the winner's request is in place: it shows the old link or the new one
    let link = requestFromPage((await p.browser.follow(p.promptUrl)).html!);
    expect(link).not.toBe(p.link);
    for (const seen of links) expect([p.link, link]).toContain(seen);
    for (let n = 3; n <= MAX_REQUESTS_PER_STEP + 1; n++) {
      await silentWallet(link);
      await waitForStall();
      const next = await askFresh(p);
      if (n <= MAX_REQUESTS_PER_STEP) expect(next).not.toBe(link);
      else expect(next).toBe(link); // the fifth request stays: the holder starts again from the app
      link = next;
    }
    expect(await statusOf(p)).toEqual({ status: 'stalled' });
  });
});

describe('a fresh request after the wallet could not take the request (issue 36)', () => {
  it("an error other than access_denied reads refused, in the holder's words; a fresh request then completes the flow", async () => {
    const p = await startVerification();
    const silent = await silentWallet(p.link);
    // §8.3.1: a wallet that cannot encrypt sends its error unencrypted
    const answered = await postForm(silent.responseUri, { state: silent.state, error: 'vp_formats_not_supported' });
    expect(answered.status).toBe(200);
    expect(await statusOf(p)).toEqual({
      status: 'refused',
      message: 'The wallet does not support the credential format that was asked for.',
    });
    const fresh = await askFresh(p);
    expect(fresh).not.toBe(p.link);
    expect((await wallet.present(fresh)).status).toBe(200);
    const done = await p.browser.follow(`${p.promptUrl}/continue`);
    expect(new URL(done.final).searchParams.get('code')).toBeTruthy();
  });

  it('the holder who gives up instead sends the relying party access_denied naming what the wallet answered', async () => {
    const p = await startVerification();
    const silent = await silentWallet(p.link);
    await postForm(silent.responseUri, { state: silent.state, error: 'wallet_unavailable' });
    const done = await p.browser.follow(`${p.promptUrl}/continue`);
    const callback = new URL(done.final);
    expect(Object.fromEntries(callback.searchParams)).toMatchObject({
      error: 'access_denied',
      error_description: 'the wallet answered wallet_unavailable',
      state: p.state,
    });
    // given up: no fresh request any more
    expect((await fetch(`${p.promptUrl}/fresh`, { method: 'POST', redirect: 'manual' })).status).toBe(400);
  });

  it('access_denied (the holder said no in the wallet) still ends the flow', async () => {
    const p = await startVerification();
    const silent = await silentWallet(p.link);
    await postForm(silent.responseUri, { state: silent.state, error: 'access_denied' });
    expect(await statusOf(p)).toMatchObject({ status: 'failed' });
    expect(await askFresh(p)).toBe(p.link);
  });

  it('External Client flow: after a stall and a fresh request the client gets exactly one event, flow.completed', async () => {
    const p = await startVerification(EXTERNAL, ' External');
    await silentWallet(p.link);
    await waitForStall();
    const fresh = await askFresh(p);
    expect((await wallet.present(fresh)).status).toBe(200);
    await receiver.next((h) => h.payload.type === 'flow.completed' && h.payload.data.state === p.state);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = receiver.received.filter(
      (h) => h.payload.data.state === p.state && h.payload.type.startsWith('flow.'),
    );
    expect(events.map((h) => h.payload.type)).toEqual(['flow.completed']);
  });
});
