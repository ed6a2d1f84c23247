import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { holderCompletesIssuance, newWallet, pushIssuance } from '../helpers/flows.js';
import { RoundTripRecorder } from '../helpers/roundTrips.js';
import { testStore } from '../helpers/stores.js';

/**
 * Store work a request does next to oidc-provider's own shares a round trip with it (src/store/requestScope.ts):
 * on Redis each round trip is a write and a read system call and the client's work around them, about 1 %
 * of an issuance flow's CPU on the bench machine (bench/README.md). Each case names a pair of operations
 * that go out together (one Redis pipeline: issued in the same event-loop turn) and a read that is not
 * repeated. The whole flow runs on the recorded store, so it also shows that the flow still works.
 */
let t: TestService;
let store: RoundTripRecorder;
let claims: Record<string, unknown>;
beforeAll(async () => {
  store = new RoundTripRecorder(await testStore());
  t = await startTestService({}, { store });
  const rp = await pushIssuance(t.url, { clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer, attributes: { FirstName: 'Ada', LastName: 'Lovelace' }, pin: '4821', redirectUri: REDIRECT });
  const done = await holderCompletesIssuance(rp.authorizeUrl.href, { redirectUri: REDIRECT, wallet: await newWallet(), pin: '4821' });
  const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(done.callbackUrl), { pkceCodeVerifier: rp.verifier, expectedState: rp.state, expectedNonce: rp.nonce });
  claims = tokens.claims()!;
});
afterAll(async () => t?.stop());

const one = (ops: ReturnType<RoundTripRecorder['find']>, what: string) => {
  expect(ops, what).toHaveLength(1);
  return ops[0];
};

describe('Issuance flow: store operations that share a round trip', () => {
  it('the flow completes on the recorded store (openid-client validates the ID token)', () => {
    expect(claims.FirstName).toBe('Ada');
  });

  it("authorise: the pushed request is read with the request_uri's single-use claim (D16), and the provider does not read it again", () => {
    const claim = one(store.find('setIfAbsent', 'par-used:v2:'), 'par-used claim');
    const reads = store.find('get', 'oidc:v2:PushedAuthorizationRequest:');
    expect(store.batchOf(claim)).toContain(`get ${reads[0].key}`);
    // read ahead at authorise, read once more by the provider when it resumes after the wallet step
    expect(reads).toHaveLength(2);
  });

  it("wallet token request: the pre-authorized code's record is read with the offer, once", () => {
    const offer = one(store.find('getMany', /^wallet:\{[^}]+\}:offer$/), 'offer read for redemption');
    const code = one(store.find('get', 'oidc:wallet:PreAuthorizedCode:'), "the code's record");
    expect(code.batch).toBe(offer.batch);
  });

  it("wallet token request: the code's grant is read ahead of the code's consumption, in the same round trip, and not again", () => {
    const consume = one(store.find('markConsumed', 'oidc:wallet:PreAuthorizedCode:'), 'code consumed');
    const token = one(store.find('set', 'oidc:wallet:AccessToken:'), 'access token');
    const reads = store.find('get', 'oidc:wallet:Grant:').filter((o) => o.batch <= token.batch);
    expect(reads, 'the grant read before the access token is saved').toHaveLength(1);
    expect(reads[0].batch).toBe(consume.batch);
    expect(store.ops.indexOf(reads[0])).toBeLessThan(store.ops.indexOf(consume));
  });

  it('wallet token request: the offer shows scanned in the round trip that saves the access token', () => {
    const token = one(store.find('set', 'oidc:wallet:AccessToken:'), 'access token');
    const scanned = one(store.find('set', /^wallet:\{[^}]+\}:status$/), 'scanned status');
    expect(scanned.batch).toBe(token.batch);
  });

  it("credential request: the step's interaction is read in the round trip that takes the offer", () => {
    const take = one(store.find('consume', /^wallet:\{[^}]+\}:offer$/), 'offer taken');
    expect(store.batchOf(take).some((op) => op.startsWith('get oidc:v2:Interaction:'))).toBe(true);
    // and not read again before the authorisation is finished from it
    const after = store.ops.filter((o) => o.batch > take.batch);
    const finished = after.findIndex((o) => o.op === 'set' && o.key.startsWith('oidc:v2:Interaction:'));
    expect(after.slice(0, finished).filter((o) => o.key.startsWith('oidc:v2:Interaction:'))).toEqual([]);
  });

  it("credential request: the offer's outcome goes out right after the interaction it finishes, in the same round trip", () => {
    const outcome = one(store.find('setIfAbsent', /^wallet:\{[^}]+\}:outcome$/), 'outcome');
    const batch = store.batchOf(outcome);
    const interaction = batch.findIndex((op) => op.startsWith('set oidc:v2:Interaction:'));
    expect(interaction).toBeGreaterThanOrEqual(0);
    expect(batch.indexOf(`setIfAbsent ${outcome.key}`)).toBeGreaterThan(interaction);
  });
});
