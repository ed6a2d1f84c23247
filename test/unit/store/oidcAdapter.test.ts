import { afterEach, beforeEach, describe, it, expect } from 'vitest';
import { errors } from 'oidc-provider';
import { MemoryStore } from '../../../src/store/memory.js';
import { createOidcAdapterFactory } from '../../../src/store/oidcAdapter.js';

let store: MemoryStore;
let Adapter: ReturnType<typeof createOidcAdapterFactory>;
beforeEach(() => {
  store = new MemoryStore();
  Adapter = createOidcAdapterFactory(store, 'v2');
});
afterEach(async () => {
  await store.close();
});

const now = () => Math.floor(Date.now() / 1000);
const later = (seconds: number) => Date.now() + seconds * 1000;

describe("oidc-provider adapter over the Store (D14: one store serves oidc-provider's models)", () => {
  it('upsert then find returns the payload; an unknown id is undefined', async () => {
    const codes = new Adapter('AuthorizationCode');
    const payload = { jti: 'c1', kind: 'AuthorizationCode', clientId: 'hr-portal', grantId: 'g1', exp: now() + 60 };
    await codes.upsert('c1', payload, 60);
    expect(await codes.find('c1')).toEqual(payload);
    expect(await codes.find('nope')).toBeUndefined();
  });

  it('keeps models and namespaces apart', async () => {
    await new Adapter('AuthorizationCode').upsert('same', { kind: 'AuthorizationCode' }, 60);
    expect(await new Adapter('AccessToken').find('same')).toBeUndefined();
    const V1 = createOidcAdapterFactory(store, 'v1');
    expect(await new V1('AuthorizationCode').find('same')).toBeUndefined();
  });

  it('a record expires after the expiresIn oidc-provider gives', async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c1', { kind: 'AuthorizationCode' }, 60);
    store.sweep(later(59));
    expect(await codes.find('c1')).toBeDefined();
    store.sweep(later(61));
    expect(await codes.find('c1')).toBeUndefined();
  });

  it('keeps a record without a lifetime for a bounded fallback time, not forever', async () => {
    const clients = new Adapter('Client');
    await clients.upsert('x', { client_id: 'x' }, undefined as unknown as number);
    store.sweep(later(60));
    expect(await clients.find('x')).toBeDefined();
    store.sweep(later(24 * 3600));
    expect(await clients.find('x')).toBeUndefined();
  });

  it('findByUid finds a Session by its uid', async () => {
    const sessions = new Adapter('Session');
    await sessions.upsert('sess-1', { uid: 'uid-1', accountId: 'a' }, 600);
    expect(await sessions.findByUid('uid-1')).toEqual({ uid: 'uid-1', accountId: 'a' });
    expect(await sessions.findByUid('uid-2')).toBeUndefined();
  });

  it('findByUid does not find a Session that was destroyed', async () => {
    const sessions = new Adapter('Session');
    await sessions.upsert('sess-1', { uid: 'uid-1' }, 600);
    await sessions.destroy('sess-1');
    expect(await sessions.findByUid('uid-1')).toBeUndefined();
  });

  it('findByUserCode finds a record by its user code', async () => {
    const devices = new Adapter('DeviceCode');
    await devices.upsert('dc-1', { userCode: 'ABCD-EFGH', clientId: 'tv' }, 600);
    expect(await devices.findByUserCode('ABCD-EFGH')).toEqual({ userCode: 'ABCD-EFGH', clientId: 'tv' });
    expect(await devices.findByUserCode('ZZZZ-ZZZZ')).toBeUndefined();
  });

  it('consume marks the record consumed (seconds since the epoch)', async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c1', { kind: 'AuthorizationCode', exp: now() + 60 }, 60);
    const before = now();
    await codes.consume('c1');
    const found = await codes.find('c1');
    expect(found?.consumed).toBeTypeOf('number');
    expect(found!.consumed!).toBeGreaterThanOrEqual(before);
    expect(found!.consumed!).toBeLessThanOrEqual(now());
  });

  it("a second consume of the same code rejects with oidc-provider's InvalidGrant (D16 single use)", async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c1', { kind: 'AuthorizationCode', exp: now() + 60 }, 60);
    await codes.consume('c1');
    const second = codes.consume('c1');
    await expect(second).rejects.toBeInstanceOf(errors.InvalidGrant);
    await expect(codes.consume('c1')).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('of 50 concurrent consumes of one code exactly one resolves (D14: one winner)', async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c1', { kind: 'AuthorizationCode', exp: now() + 60 }, 60);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => codes.consume('c1')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(49);
    for (const r of rejected) expect(r.reason).toBeInstanceOf(errors.InvalidGrant);
    expect((await codes.find('c1'))?.consumed).toBeTypeOf('number');
  });

  it('consume keeps the record until its own expiry', async () => {
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c1', { kind: 'AuthorizationCode', exp: now() + 60 }, 60);
    await codes.consume('c1');
    store.sweep(later(30));
    expect(await codes.find('c1')).toBeDefined();
    store.sweep(later(120));
    expect(await codes.find('c1')).toBeUndefined();
  });

  it("models named notKept are never written (D3: the RP providers' access tokens never leave the service)", async () => {
    const Skipping = createOidcAdapterFactory(store, 'v2', {}, new Set(['AccessToken']));
    await new Skipping('AccessToken').upsert('at1', { grantId: 'g1', exp: now() + 60 }, 60);
    await new Skipping('AuthorizationCode').upsert('c1', { grantId: 'g1', exp: now() + 60 }, 60);
    expect(await new Skipping('AccessToken').find('at1')).toBeUndefined();
    expect(await new Skipping('AuthorizationCode').find('c1')).toBeDefined();
  });

  it('destroy removes the record', async () => {
    const par = new Adapter('PushedAuthorizationRequest');
    await par.upsert('r1', { request: 'jwt' }, 60);
    await par.destroy('r1');
    expect(await par.find('r1')).toBeUndefined();
  });

  it('revokeByGrantId removes every record of the grant and nothing else', async () => {
    const codes = new Adapter('AuthorizationCode');
    const tokens = new Adapter('AccessToken');
    const refresh = new Adapter('RefreshToken');
    await codes.upsert('c1', { grantId: 'g1' }, 60);
    await tokens.upsert('at1', { grantId: 'g1' }, 60);
    await refresh.upsert('rt1', { grantId: 'g1' }, 600);
    await codes.upsert('c2', { grantId: 'g2' }, 60);
    await tokens.upsert('at2', { grantId: 'g2' }, 60);

    await tokens.revokeByGrantId('g1');

    expect(await codes.find('c1')).toBeUndefined();
    expect(await tokens.find('at1')).toBeUndefined();
    expect(await refresh.find('rt1')).toBeUndefined();
    expect(await codes.find('c2')).toEqual({ grantId: 'g2' });
    expect(await tokens.find('at2')).toEqual({ grantId: 'g2' });
  });

  it('revokeByGrantId of an unknown grant does nothing', async () => {
    const tokens = new Adapter('AccessToken');
    await tokens.upsert('at1', { grantId: 'g1' }, 60);
    await tokens.revokeByGrantId('unknown');
    expect(await tokens.find('at1')).toBeDefined();
  });

  it('the ttlCaps argument shortens a model lifetime below what oidc-provider asks (PAR: lifetimes.par)', async () => {
    const Capped = createOidcAdapterFactory(store, 'v2', { PushedAuthorizationRequest: 60 });
    const par = new Capped('PushedAuthorizationRequest');
    const codes = new Capped('AuthorizationCode');
    await par.upsert('r1', { request: 'x' }, 600);
    await codes.upsert('c1', { kind: 'AuthorizationCode' }, 600);
    store.sweep(later(59));
    expect(await par.find('r1')).toBeDefined();
    store.sweep(later(61));
    expect(await par.find('r1')).toBeUndefined();
    // other models keep the lifetime oidc-provider asked for
    expect(await codes.find('c1')).toBeDefined();
  });

  it('a cap never lengthens a shorter lifetime', async () => {
    const Capped = createOidcAdapterFactory(store, 'v2', { PushedAuthorizationRequest: 60 });
    const par = new Capped('PushedAuthorizationRequest');
    await par.upsert('r1', { request: 'x' }, 10);
    store.sweep(later(11));
    expect(await par.find('r1')).toBeUndefined();
  });
});
