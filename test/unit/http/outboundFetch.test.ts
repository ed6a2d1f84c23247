/**
 * The outbound rules (docs/decisions.md "Outbound fetches", src/http/outboundFetch.ts) against real HTTP
 * servers on 127.0.0.1: the scheme, the address actually connected to (a literal, or what a name resolves
 * to in the connection's own lookup), every redirect hop, size and time. A refused target never sees a
 * connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LOOPBACK_TARGETS,
  OutboundFetch,
  OutboundRefused,
  outboundFromConfig,
} from '../../../src/http/outboundFetch.js';
import { specialAddressKind, TargetRules } from '../../../src/rules/addresses.js';

let server: Server;
let port: number;
/** connections the server accepted, and the paths it was asked for */
let connections = 0;
const asked: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.url === '/doc') return res.end('the document');
    if (req.url === '/same') return res.writeHead(302, { location: '/doc' }).end();
    if (req.url === '/away') return res.writeHead(302, { location: `http://localhost:${port}/doc` }).end();
    if (req.url === '/big') return res.end('x'.repeat(2048));
    if (req.url === '/dribble') {
      // headers at once, then a byte a second: only the time limit ends it
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'), 1000);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/silent') return;
    res.writeHead(404).end();
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const GET = { what: 'the document', accept: 'text/plain', maxBytes: 1024, timeoutMs: 3000 };

/** What `get` threw: its class and message, or the text it read. */
async function outcome(outbound: OutboundFetch, url: string, o: Partial<typeof GET> & { redirects?: number } = {}) {
  try {
    return { text: await outbound.get(url, { ...GET, ...o }) };
  } catch (err) {
    return { error: (err as Error).constructor.name, message: (err as Error).message };
  }
}

async function using<T>(outbound: OutboundFetch, use: (o: OutboundFetch) => Promise<T>): Promise<T> {
  try {
    return await use(outbound);
  } finally {
    await outbound.close();
  }
}

describe('special addresses (RFC 6890): what is refused unless the operator allows it', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fd00::1', 'unique local (private)'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    // an IPv4 address in IPv6 clothing is the IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'], // RFC 6052 NAT64 of 169.254.169.254
  ])('%s is %s', (address, kind) => {
    expect(specialAddressKind(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    '%s is public',
    (address) => {
      expect(specialAddressKind(address)).toBeUndefined();
    },
  );

  it('allows what the operator lists: a network by address, a host by name', () => {
    const rules = new TargetRules(['10.20.0.0/16', 'fd12::/16', '127.0.0.1', 'Keys.Internal']);
    expect(rules.refusal('10.20.3.4')).toBeUndefined();
    expect(rules.refusal('10.21.0.1')).toBe('private');
    expect(rules.refusal('fd12::5')).toBeUndefined();
    expect(rules.refusal('::ffff:127.0.0.1')).toBeUndefined();
    expect(rules.refusal('127.0.0.2')).toBe('loopback');
    expect(rules.allowsName('keys.internal')).toBe(true);
    expect(rules.allowsName('keys.internal.')).toBe(true);
    expect(rules.allowsName('other.internal')).toBe(false);
  });
});

describe('the outbound rules', () => {
  it('refuse a URL that is not https (data:, file:, plain http off loopback) without a connection', async () => {
    await using(new OutboundFetch({ allowedPrivateTargets: LOOPBACK_TARGETS }), async (outbound) => {
      const before = connections;
      for (const url of ['data:text/plain,hi', 'file:///etc/passwd', 'ftp://example.com/x', 'http://example.com/x']) {
        expect(await outcome(outbound, url)).toEqual({
          error: 'OutboundRefused',
          message: 'the document is not https (http only on a loopback host)',
        });
      }
      expect(await outcome(outbound, `http://user:pw@127.0.0.1:${port}/doc`)).toMatchObject({
        error: 'OutboundRefused',
      });
      expect(connections).toBe(before);
    });
  });

  it('refuse an address literal of a special range, checked before any connection', async () => {
    await using(new OutboundFetch(), async (outbound) => {
      const before = connections;
      for (const [url, kind] of [
        [`http://127.0.0.1:${port}/doc`, 'a loopback'],
        [`http://[::1]:${port}/doc`, 'a loopback'],
        [`https://0.0.0.0:${port}/doc`, 'an unspecified'],
        ['https://169.254.169.254/latest/meta-data/', 'a link-local'],
        ['https://[::ffff:a9fe:a9fe]/latest/meta-data/', 'a link-local'],
        ['https://192.168.1.1/doc', 'a private'],
        ['https://[fd00::1]/doc', 'a unique local (private)'],
      ]) {
        expect(await outcome(outbound, url)).toEqual({
          error: 'OutboundRefused',
          message: `the document is at ${kind} address, which outboundFetch.allowedPrivateTargets does not allow`,
        });
      }
      expect(connections).toBe(before);
    });
  });

  it('refuse a name that resolves to loopback (the real DNS: localhost), checked in the connection itself', async () => {
    await using(new OutboundFetch(), async (outbound) => {
      const before = connections;
      expect(await outcome(outbound, `http://localhost:${port}/doc`)).toEqual({
        error: 'OutboundRefused',
        message: 'the document is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
      });
      expect(connections).toBe(before);
    });
    // allowed: the same fetch reads the document
    await using(new OutboundFetch({ allowedPrivateTargets: ['127.0.0.0/8'] }), async (outbound) => {
      expect(await outcome(outbound, `http://localhost:${port}/doc`)).toEqual({ text: 'the document' });
    });
  });

  it('check the address the connection uses, on every connection: a name that rebinds to loopback is refused', async () => {
    // a name whose answers change (DNS rebinding): first a public address, then loopback
    const answers = ['203.0.113.7', '127.0.0.1'];
    const asks: string[] = [];
    const rebinding: LookupFunction = (hostname, options, callback) => {
      asks.push(hostname);
      const address = answers.shift() ?? '127.0.0.1';
      if (options.all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    };
    await using(new OutboundFetch({ lookup: rebinding }), async (outbound) => {
      const before = connections;
      // the first answer is public: a connection is tried there (TEST-NET-3 answers nothing in time)
      expect(await outcome(outbound, `https://rebind.test:${port}/doc`, { timeoutMs: 300 })).toMatchObject({
        error: expect.stringMatching(/OutboundTimeout|OutboundUnavailable/),
      });
      // the next connection resolves again, to loopback, and is refused before it is made
      expect(await outcome(outbound, `https://rebind.test:${port}/doc`)).toEqual({
        error: 'OutboundRefused',
        message: 'the document is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
      });
      expect(asks).toEqual(['rebind.test', 'rebind.test']);
      expect(connections).toBe(before);
    });
  });

  it('refuse a name with any special address among its answers', async () => {
    const mixed: LookupFunction = (_hostname, options, callback) => {
      const all = [
        { address: '203.0.113.7', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ];
      if (options.all) (callback as (e: null, a: typeof all) => void)(null, all);
      else callback(null, all[0].address, 4);
    };
    await using(new OutboundFetch({ lookup: mixed }), async (outbound) => {
      expect(await outcome(outbound, 'https://mixed.test/doc')).toMatchObject({
        error: 'OutboundRefused',
        message: expect.stringContaining('at a private address'),
      });
    });
  });

  it('follow redirects only within the origin and as often as allowed, each hop under the same rules', async () => {
    await using(new OutboundFetch({ allowedPrivateTargets: ['127.0.0.1'] }), async (outbound) => {
      expect(await outcome(outbound, `http://127.0.0.1:${port}/same`, { redirects: 1 })).toEqual({
        text: 'the document',
      });
      expect(await outcome(outbound, `http://127.0.0.1:${port}/same`)).toEqual({
        error: 'OutboundRefused',
        message: 'the document redirects (HTTP 302)',
      });
      const before = asked.length;
      expect(await outcome(outbound, `http://127.0.0.1:${port}/away`, { redirects: 3 })).toEqual({
        error: 'OutboundRefused',
        message: 'the document redirects to another origin',
      });
      expect(asked.slice(before)).toEqual(['/away']);
    });
  });

  it('refuse an answer larger than its limit, and end one that is slow within its time', async () => {
    await using(new OutboundFetch({ allowedPrivateTargets: LOOPBACK_TARGETS }), async (outbound) => {
      expect(await outcome(outbound, `http://127.0.0.1:${port}/big`)).toEqual({
        error: 'OutboundUnavailable',
        message: 'the document is larger than 1 KiB',
      });
      expect(await outcome(outbound, `http://127.0.0.1:${port}/dribble`, { timeoutMs: 1500 })).toEqual({
        error: 'OutboundTimeout',
        message: 'fetching the document timed out',
      });
      expect(await outcome(outbound, `http://127.0.0.1:${port}/silent`, { timeoutMs: 500 })).toEqual({
        error: 'OutboundTimeout',
        message: 'fetching the document timed out',
      });
      expect(await outcome(outbound, `http://127.0.0.1:${port}/missing`)).toEqual({
        error: 'OutboundUnavailable',
        message: 'the document answered HTTP 404',
      });
    });
  });

  it('by configuration: loopback allowed by default only to a service on a loopback base URL; our own origin always', async () => {
    const dev = outboundFromConfig({ baseUrl: 'http://localhost:3000', outboundFetch: {} });
    await using(dev, async (outbound) => {
      expect(await outcome(outbound, `http://127.0.0.1:${port}/doc`)).toEqual({ text: 'the document' });
    });
    const production = outboundFromConfig({ baseUrl: 'https://vc.example.com', outboundFetch: {} });
    await using(production, async (outbound) => {
      expect(await outcome(outbound, `http://127.0.0.1:${port}/doc`)).toMatchObject({ error: 'OutboundRefused' });
    });
    // the operator's list replaces the default; the service's own origin stays allowed whatever it resolves to
    const listed = outboundFromConfig({
      baseUrl: `http://localhost:${port}`,
      outboundFetch: { allowedPrivateTargets: [] },
    });
    await using(listed, async (outbound) => {
      expect(await outcome(outbound, `http://localhost:${port}/doc`)).toEqual({ text: 'the document' });
      expect(await outcome(outbound, `http://127.0.0.1:${port}/doc`)).toMatchObject({ error: 'OutboundRefused' });
    });
  });

  it('a library fetch (openid-client) meets the same target rules', async () => {
    await using(new OutboundFetch(), async (outbound) => {
      await expect(outbound.fetch(`http://localhost:${port}/doc`, {}, 'the provider')).rejects.toThrow(
        new OutboundRefused(
          'the provider is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
        ),
      );
    });
  });
});
