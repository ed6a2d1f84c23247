import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory.js';
import { createOidcAdapterFactory, RequestReads } from '../../../src/store/oidcAdapter.js';

/** A memory store that counts its reads. */
function countingStore() {
  const store = new MemoryStore();
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (async (key: string) => {
    reads++;
    return get(key);
  }) as MemoryStore['get'];
  return { store, reads: () => reads };
}

describe('RequestReads: a record an edge read, handed to the provider once', () => {
  it('answers the next read of a kept record without the store, once', async () => {
    const { store, reads } = countingStore();
    const Adapter = createOidcAdapterFactory(store, 't');
    const codes = new Adapter('PreAuthorizedCode');
    await codes.upsert('c1', { accountId: 'offer-1', txCode: '1234' }, 60);
    const request = new RequestReads();
    expect(await request.keep(() => codes.find('c1'))).toMatchObject({ accountId: 'offer-1' });
    expect(reads()).toBe(1);
    await request.serve(async () => {
      expect(await codes.find('c1')).toMatchObject({ accountId: 'offer-1', txCode: '1234' });
      expect(reads()).toBe(1); // no second store read
      expect(await codes.find('c1')).toMatchObject({ accountId: 'offer-1' });
      expect(reads()).toBe(2); // handed out once: a later read goes to the store
    });
    await store.close();
  });

  it('keeps a record that was not found as not found', async () => {
    const { store, reads } = countingStore();
    const codes = new (createOidcAdapterFactory(store, 't'))('PreAuthorizedCode');
    const request = new RequestReads();
    expect(await request.keep(() => codes.find('missing'))).toBeUndefined();
    expect(await request.serve(() => codes.find('missing'))).toBeUndefined();
    expect(reads()).toBe(1);
    await store.close();
  });

  it('drops a kept record once it is consumed, rewritten, destroyed or revoked with its grant', async () => {
    const { store } = countingStore();
    const Adapter = createOidcAdapterFactory(store, 't');
    const codes = new Adapter('PreAuthorizedCode');
    for (const [id, change] of [
      ['consumed', () => codes.consume('consumed')],
      ['rewritten', () => codes.upsert('rewritten', { accountId: 'offer-1', grantId: 'g', note: 'new' }, 60)],
      ['destroyed', () => codes.destroy('destroyed')],
      ['revoked', () => codes.revokeByGrantId('g')],
    ] as const) {
      await codes.upsert(id, { accountId: 'offer-1', grantId: 'g' }, 60);
      const request = new RequestReads();
      await request.keep(() => codes.find(id));
      const after = await request.serve(async () => {
        await change();
        return codes.find(id);
      });
      if (id === 'consumed') expect(after).toMatchObject({ consumed: expect.any(Number) });
      else if (id === 'rewritten') expect(after).toMatchObject({ note: 'new' });
      else expect(after).toBeUndefined();
    }
    await store.close();
  });

  it('keeps nothing outside keep(), and nothing for another request', async () => {
    const { store, reads } = countingStore();
    const codes = new (createOidcAdapterFactory(store, 't'))('PreAuthorizedCode');
    await codes.upsert('c1', { accountId: 'offer-1' }, 60);
    const request = new RequestReads();
    await request.serve(() => codes.find('c1'));
    await request.serve(() => codes.find('c1'));
    expect(reads()).toBe(2);
    await request.keep(() => codes.find('c1'));
    await new RequestReads().serve(() => codes.find('c1')); // another request
    await codes.find('c1'); // no request at all
    expect(reads()).toBe(5);
    await store.close();
  });
});
