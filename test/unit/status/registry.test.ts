import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { jwtVerify, decodeProtectedHeader } from 'jose';
import Koa from 'koa';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { statusListRoute } from '../../../src/status/routes.js';
import { afterAll, describe, expect, it } from 'vitest';
import { StatusListService } from '../../../src/status/listToken.js';
import { staticKeys } from '../../../src/keys/keyRing.js';
import { msoDigest, RevocationIsFinal, StatusRegistry, UnknownCredential } from '../../../src/status/registry.js';
import type { Store } from '../../../src/store/types.js';
import { STORE_KINDS } from '../../helpers/stores.js';
import { keyPair } from '../../helpers/keys.js';

const ISSUER = 'https://vc.example.com/wallet';
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** What GET /wallet/status/<id> answers over HTTP. */
async function fetchToken(service: StatusListService, listId: string) {
  const app = new Koa();
  app.use(statusListRoute('wallet', service));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/wallet/status/${encodeURIComponent(listId)}`,
    );
    return {
      found: response.status === 200,
      body: await response.text(),
      type: response.headers.get('content-type'),
      cache: response.headers.get('cache-control'),
    };
  } finally {
    server.close();
  }
}

describe.each(Object.keys(STORE_KINDS) as (keyof typeof STORE_KINDS)[])(
  'status lists on the %s store (D18, draft-ietf-oauth-status-list)',
  (kind) => {
    const stores: Store[] = [];
    const store = async () => {
      const s = await STORE_KINDS[kind]();
      stores.push(s);
      return s;
    };
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()));
    });

    it('draws distinct random indexes, remembers them by SerialNumber, and starts a new list when one is full', async () => {
      const registry = new StatusRegistry(await store(), 1024, 'wallet');
      const entries = await Promise.all(
        Array.from({ length: 300 }, (_, i) => registry.allocate(`serial-${i}`, inAnHour())),
      );
      const first = entries[0].listId;
      const inFirst = entries.filter((e) => e.listId === first).map((e) => e.idx);
      expect(new Set(inFirst).size).toBe(inFirst.length);
      // not handed out in order: a sequential allocator would give 0..n-1
      expect(inFirst.slice(0, 20)).not.toEqual([...Array(20).keys()]);
      expect(await registry.status('serial-7')).toMatchObject({ status: 'valid', entry: entries[7] });
      expect(await registry.status('never-issued')).toBeUndefined();

      const small = new StatusRegistry(await store(), 1024, 'small');
      const many = [];
      for (let i = 0; i < 1100; i++) many.push(await small.allocate(`s-${i}`, inAnHour()));
      const lists = new Set(many.map((e) => e.listId));
      expect(lists.size).toBeGreaterThanOrEqual(2);
      for (const listId of lists) {
        const idxs = many.filter((e) => e.listId === listId).map((e) => e.idx);
        expect(new Set(idxs).size).toBe(idxs.length);
        expect(idxs.length).toBeLessThanOrEqual(1024);
      }
    });

    it('revokes for good, suspends and reinstates; unknown SerialNumbers are refused', async () => {
      const registry = new StatusRegistry(await store(), 1024, 'wallet');
      await registry.allocate('a', inAnHour());
      await registry.allocate('b', inAnHour());
      expect(await registry.change('a', 'suspended')).toMatchObject({ changed: true });
      expect((await registry.status('a'))?.status).toBe('suspended');
      expect(await registry.change('a', 'valid')).toMatchObject({ changed: true });
      expect(await registry.change('a', 'valid')).toMatchObject({ changed: false });
      expect(await registry.change('b', 'revoked')).toMatchObject({ changed: true });
      expect(await registry.change('b', 'revoked')).toMatchObject({ changed: false });
      await expect(registry.change('b', 'valid')).rejects.toBeInstanceOf(RevocationIsFinal);
      await expect(registry.change('b', 'suspended')).rejects.toBeInstanceOf(RevocationIsFinal);
      expect((await registry.status('b'))?.status).toBe('revoked');
      await expect(registry.change('nope', 'revoked')).rejects.toBeInstanceOf(UnknownCredential);
    });

    it("keeps an mdoc's entry by its MSO digest, which it cannot carry: its changes say so (format), and only mdocStatus finds it", async () => {
      const shared = await store();
      const registry = new StatusRegistry(shared, 1024, 'wallet');
      const exp = inAnHour();
      const digest = msoDigest(new TextEncoder().encode('an MSO as signed'));
      await registry.allocate('m', exp, { msoDigest: digest });
      await registry.allocate('s', exp);
      expect(await registry.status('m')).toMatchObject({ status: 'valid', exp, format: 'mso_mdoc' });
      expect(await registry.status('s')).toMatchObject({ status: 'valid', exp, format: 'dc+sd-jwt' });
      expect(await registry.mdocStatus(digest)).toBe('valid');
      expect(await registry.change('m', 'suspended')).toMatchObject({ changed: true, format: 'mso_mdoc', exp });
      expect(await registry.mdocStatus(digest)).toBe('suspended');
      expect(await registry.change('m', 'revoked')).toMatchObject({ changed: true, format: 'mso_mdoc' });
      expect(await registry.mdocStatus(digest)).toBe('revoked');
      // final for an mdoc too
      await expect(registry.change('m', 'valid')).rejects.toBeInstanceOf(RevocationIsFinal);
      expect(await registry.change('s', 'revoked')).toMatchObject({ format: 'dc+sd-jwt' });
      // another issuer's mdoc, or one of another namespace, is not ours
      expect(await registry.mdocStatus(msoDigest(new TextEncoder().encode('another MSO')))).toBeUndefined();
      expect(await new StatusRegistry(shared, 1024, 'other').mdocStatus(digest)).toBeUndefined();
    });

    it('issue 49: a batch has an entry per credential under one SerialNumber; a change acts on all, and on later ones', async () => {
      const shared = await store();
      const registry = new StatusRegistry(shared, 1024, 'wallet');
      const entries = await registry.allocateMany('batch', inAnHour(), 10);
      expect(new Set(entries.map((e) => `${e.listId}.${e.idx}`)).size).toBe(10);
      expect(await registry.change('batch', 'suspended')).toMatchObject({ changed: true, credentials: 10 });
      // a re-issued batch under a suspended SerialNumber starts suspended
      const later = await registry.allocateMany('batch', inAnHour(), 3);
      const values = async (list: typeof entries) => {
        const listed = new Map<string, number>();
        for (const listId of new Set(list.map((e) => e.listId)))
          for (const [idx, value] of await registry.changedEntries(listId)) listed.set(`${listId}.${idx}`, value);
        return list.map((e) => listed.get(`${e.listId}.${e.idx}`) ?? 0);
      };
      expect(await values([...entries, ...later])).toEqual(Array(13).fill(2));
      expect(await registry.change('batch', 'revoked')).toMatchObject({ changed: true, credentials: 13 });
      expect(await values([...entries, ...later])).toEqual(Array(13).fill(1));
      await expect(registry.change('batch', 'valid')).rejects.toBeInstanceOf(RevocationIsFinal);
      const afterRevocation = await registry.allocateMany('batch', inAnHour(), 2);
      expect(await values(afterRevocation)).toEqual([1, 1]);
    });

    it('issue 49: an issuance that did not complete gives its entries back, and a SerialNumber left without any is unknown', async () => {
      const registry = new StatusRegistry(await store(), 1024, 'wallet');
      const digests = [0, 1, 2].map((i) => msoDigest(new TextEncoder().encode(`MSO ${i}`)));
      const entries = await registry.allocateMany('half', inAnHour(), 3, digests);
      expect(await registry.mdocStatus(digests[1])).toBe('valid');
      await registry.release('half', entries, digests);
      expect(await registry.status('half')).toBeUndefined();
      expect(await registry.mdocStatus(digests[1])).toBeUndefined();
      await expect(registry.change('half', 'revoked')).rejects.toBeInstanceOf(UnknownCredential);
      // a re-issuance that failed leaves the first batch as it was
      const first = await registry.allocateMany('kept', inAnHour(), 2);
      const failed = await registry.allocateMany('kept', inAnHour(), 2);
      await registry.release('kept', failed);
      expect(await registry.change('kept', 'revoked')).toMatchObject({ credentials: 2, entry: first[0] });
    });

    it('keeps a revocation a minute past the expiry, while verifiers may still accept the credential (their clock tolerance)', async () => {
      const registry = new StatusRegistry(await store(), 1024, 'wallet');
      const digest = msoDigest(new TextEncoder().encode('an MSO that expired 10 s ago'));
      const expired = Math.floor(Date.now() / 1000) - 10;
      await registry.allocate('late', expired, { msoDigest: digest });
      await registry.change('late', 'revoked');
      // longer than the one second a record of an expired credential would otherwise get
      await new Promise((r) => setTimeout(r, 1100));
      expect(await registry.status('late')).toMatchObject({ status: 'revoked', exp: expired });
      expect(await registry.mdocStatus(digest)).toBe('revoked');
    });

    it('serves a signed Status List Token that shows a change at once and is decoded by @sd-jwt/jwt-status-list', async () => {
      const registry = new StatusRegistry(await store(), 1 << 17, 'wallet');
      const { privateJwk, publicKey } = await keyPair('k1');
      const service = new StatusListService({
        registry,
        credentialIssuer: ISSUER,
        keys: staticKeys({ keys: [privateJwk] }),
        ttl: 300,
      });
      const a = await registry.allocate('a', inAnHour());
      const b = await registry.allocate('b', inAnHour());

      const before = await fetchToken(service, a.listId);
      expect(before.found).toBe(true);
      expect(before.type).toBe('application/statuslist+jwt');
      expect(before.cache).toBe('public, max-age=300');
      const { payload, protectedHeader } = await jwtVerify(before.body, publicKey, { typ: 'statuslist+jwt' });
      expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'k1' });
      expect(payload).toMatchObject({ sub: `${ISSUER}/status/${a.listId}`, ttl: 300, status_list: { bits: 2 } });
      expect(payload.exp! - payload.iat!).toBe(600);
      expect(getListFromStatusListJWT(before.body).getStatus(a.idx)).toBe(0);
      // between changes, the same token
      expect((await fetchToken(service, a.listId)).body).toBe(before.body);

      await registry.change('a', 'revoked');
      await registry.change('b', 'suspended');
      const after = await fetchToken(service, a.listId);
      expect(after.body).not.toBe(before.body);
      const list = getListFromStatusListJWT(after.body);
      expect(list.getStatus(a.idx)).toBe(1);
      expect(list.getStatus(b.idx)).toBe(2);
      expect(decodeProtectedHeader(after.body).typ).toBe('statuslist+jwt');

      // another instance (its own service, same store) serves the change too
      const other = new StatusListService({
        registry: new StatusRegistry(stores.at(-1)!, 1 << 17, 'wallet'),
        credentialIssuer: ISSUER,
        keys: staticKeys({ keys: [privateJwk] }),
        ttl: 300,
      });
      expect(getListFromStatusListJWT((await fetchToken(other, a.listId)).body).getStatus(a.idx)).toBe(1);

      expect((await fetchToken(service, 'no-such-list')).found).toBe(false);
      expect((await fetchToken(service, '../../etc')).found).toBe(false);
    });
  },
);
