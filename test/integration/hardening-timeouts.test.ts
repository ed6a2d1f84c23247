import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { listen, SERVER_TIMEOUTS, type RunningServer } from '../../src/server.js';
import { testConfig } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';

/**
 * Hardening, point 9: a slow client is cut when the configured timeouts say, within about a second (Node
 * checks them only every `connectionsCheckingInterval`, 30 s by default). Short timeouts keep the test
 * short; the check interval is the service's own.
 */
const TIMEOUTS = { headersTimeout: 1_000, requestTimeout: 2_000 };
/** how late a cut may come: the check interval (1 s) and some scheduling */
const SLACK_MS = 1_500;

let running: RunningServer;
let port: number;

beforeAll(async () => {
  const config = validateConfig(testConfig(0));
  const service = await createService(
    { config, file: 'test', baseDir: process.cwd() },
    { store: await testStore(), logger: createLogger('silent') },
  );
  running = await listen(service, 0, '127.0.0.1', TIMEOUTS);
  port = Number(new URL(running.url).port);
});
afterAll(async () => running?.stop(100));

/**
 * Connects, sends `first`, then one byte of `drip` every 200 ms (never all of it); resolves when the
 * server closes the connection, with the time it took and what it answered, or after `giveUpMs`.
 */
function slowClient(
  first: string,
  drip: string,
  giveUpMs: number,
): Promise<{ ms: number; answer: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const start = Date.now();
    let answer = '';
    let i = 0;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(first));
    const timer = setInterval(() => {
      if (i < drip.length - 1 && socket.writable) socket.write(drip[i++]);
    }, 200);
    const finish = (closedByServer: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ ms: Date.now() - start, answer, closedByServer });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

describe('slow clients are cut on time', () => {
  it("uses the service's timeouts, checked every second", () => {
    expect(SERVER_TIMEOUTS).toEqual({
      headersTimeout: 15_000,
      requestTimeout: 30_000,
      connectionsCheckingInterval: 1_000,
    });
    expect(running.server.headersTimeout).toBe(TIMEOUTS.headersTimeout);
    expect(running.server.requestTimeout).toBe(TIMEOUTS.requestTimeout);
  });

  it('headers sent slowly: cut within headersTimeout + about a second, with a 408', async () => {
    const drip = `X-Slow: ${'a'.repeat(100)}\r\n\r\n`;
    const { ms, answer, closedByServer } = await slowClient(
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      drip,
      TIMEOUTS.headersTimeout + SLACK_MS + 2_000,
    );
    expect(closedByServer, `still open after ${ms} ms`).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUTS.headersTimeout - 50);
    expect(ms).toBeLessThanOrEqual(TIMEOUTS.headersTimeout + SLACK_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a body sent slowly: cut within requestTimeout + about a second', async () => {
    const head =
      'POST /v2.0/oidc/par HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n';
    const { ms, closedByServer } = await slowClient(head, 'a'.repeat(1000), TIMEOUTS.requestTimeout + SLACK_MS + 2_000);
    expect(closedByServer, `still open after ${ms} ms`).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUTS.requestTimeout - 50);
    expect(ms).toBeLessThanOrEqual(TIMEOUTS.requestTimeout + SLACK_MS);
  });

  it('a client that keeps up is not cut', async () => {
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
  });
});
