import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory.js';
import { createOidcAdapterFactory } from '../../../src/store/oidcAdapter.js';
import { grantClaims, grantClaimsHooks, saveGrantWithClaims } from '../../../src/oidc/grantClaims.js';

/** The ID token's claims ride on the wallet step's Grant record (D2), not in a record of their own. */
let store: MemoryStore;
let grants: InstanceType<ReturnType<typeof createOidcAdapterFactory>>;
beforeEach(() => {
  store = new MemoryStore();
  const Adapter = createOidcAdapterFactory(store, 'v2', {}, new Set(), { Grant: grantClaimsHooks });
  grants = new Adapter('Grant');
});
afterEach(async () => store.close());

/** A grant as oidc-provider's model saves one: its own members only. */
const grantModel = (jti = '') => ({
  jti,
  generateTokenId: () => 'generated-grant-id',
  async save() {
    this.jti ||= this.generateTokenId();
    await grants.upsert(this.jti, { jti: this.jti, kind: 'Grant', accountId: 'holder', clientId: 'hr-portal' }, 600);
    return this.jti;
  },
});
const flow = { sub: 'SN-1', claims: { FirstName: 'Ada', SerialNumber: 'SN-1' } };

describe('the flow claims on a grant', () => {
  it('are written as the grant record\'s flow member, by the save that carries them', async () => {
    const id = await saveGrantWithClaims(grantModel(), flow);
    expect(id).toBe('generated-grant-id');
    expect(await store.get('oidc:v2:Grant:generated-grant-id')).toMatchObject({ kind: 'Grant', accountId: 'holder', flow });
  });

  it('are not written by another save of a grant, nor by a later save of the same one', async () => {
    await grantModel('other').save();
    expect(await store.get('oidc:v2:Grant:other')).not.toHaveProperty('flow');
    const grant = grantModel('g1');
    await saveGrantWithClaims(grant, flow);
    await grant.save();
    expect(await store.get('oidc:v2:Grant:g1')).not.toHaveProperty('flow');
  });

  it('are read from the record when no read of the grant left them on the request', async () => {
    await saveGrantWithClaims(grantModel('g2'), flow);
    const request = {};
    expect(await grantClaims(request, 'g2', () => grants.find('g2'))).toEqual(flow);
    expect(await grantClaims(request, 'missing', () => grants.find('missing'))).toBeUndefined();
  });
});
