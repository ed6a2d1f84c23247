/**
 * Issue 22, Branding: `ui {name, logo, primaryColor, accentColor, supportUrl, privacyUrl}` and a client's
 * `logoUri`. Logos are fetched once at start-up (a real HTTP server counts the fetches) and served by the
 * service, so pages load nothing from third parties; a branded prompt matches a stored screenshot within
 * a tolerance; a broken logo file stops the start-up with its path, an unreachable logo URL is left out.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';
import { startTestService, SECRETS, REDIRECT, testConfig, type TestService } from '../helpers/service.js';
import { pushIssuance } from '../helpers/flows.js';

const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const REFERENCE = fileURLToPath(new URL('../fixtures/screenshots/branded-prompt.png', import.meta.url));

/** A square PNG in one colour with a white stripe: a real image for the browser to decode. */
function logoPng(rgb: [number, number, number], size = 64): Buffer {
  const png = new PNG({ width: size, height: size });
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4;
      const stripe = y > size / 3 && y < (2 * size) / 3;
      png.data.set(stripe ? [255, 255, 255, 255] : [...rgb, 255], i);
    }
  return PNG.sync.write(png);
}

const SVG_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#0b6e4f"/><path d="M9 17l5 5 9-11" stroke="#fff" stroke-width="3" fill="none"/></svg>';

let dir: string;
let logoServer: Server;
let logoFetches = 0;
let logoBase: string;
let t: TestService;
let browser: Browser;

async function startLogoServer(): Promise<void> {
  const clientLogo = logoPng([91, 42, 134]);
  logoServer = createServer((req, res) => {
    if (req.url === '/rp-logo.png') {
      logoFetches++;
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(clientLogo);
    } else if (req.url === '/huge.png') {
      res.writeHead(200, { 'Content-Type': 'image/png' }).end(Buffer.concat([clientLogo, Buffer.alloc(300 * 1024)]));
    } else if (req.url === '/page.html') {
      res.writeHead(200, { 'Content-Type': 'image/png' }).end('<html>not an image</html>');
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => logoServer.listen(0, '127.0.0.1', resolve));
  logoBase = `http://127.0.0.1:${(logoServer.address() as AddressInfo).port}`;
}

function brandedConfig(overrides: { logo?: string; clientLogo?: string } = {}) {
  const clients = (testConfig(0).clients as Record<string, unknown>[]).map((c) =>
    c.clientId === 'issuer-pkce'
      ? { ...c, clientName: 'Acme HR', logoUri: overrides.clientLogo ?? `${logoBase}/rp-logo.png` }
      : c,
  );
  return {
    clients,
    ui: {
      name: { en: 'Acme Credentials', de: 'Acme Nachweise' },
      logo: overrides.logo ?? join(dir, 'logo.svg'),
      primaryColor: '#0b6e4f',
      accentColor: '#5b2a86',
      supportUrl: 'https://acme.example/help',
      privacyUrl: 'https://acme.example/privacy',
    },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-brand-'));
  writeFileSync(join(dir, 'logo.svg'), SVG_LOGO);
  writeFileSync(join(dir, 'not-an-image.png'), 'hello');
  writeFileSync(join(dir, 'huge.png'), Buffer.concat([logoPng([0, 0, 0]), Buffer.alloc(300 * 1024)]));
  await startLogoServer();
  t = await startTestService(brandedConfig());
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await new Promise((resolve) => logoServer?.close(resolve));
});

async function brandedPrompt(
  o: { locale?: string; colorScheme?: 'light' | 'dark'; bypassCSP?: boolean } = {},
): Promise<{ page: Page; requests: string[] }> {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
    pin: '4821',
    redirectUri: REDIRECT,
  });
  const context = await browser.newContext({
    locale: o.locale ?? 'en-US',
    viewport: { width: 1280, height: 900 },
    colorScheme: o.colorScheme ?? 'light',
    bypassCSP: o.bypassCSP,
  });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(rp.authorizeUrl.href);
  await page.locator('#prompt').waitFor();
  await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
  return { page, requests };
}

/** Pixels (of the same size) whose colour differs by more than `level` in any channel, as a share of all. */
function differingShare(a: PNG, b: PNG, level = 40): number {
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    if (
      Math.abs(a.data[i] - b.data[i]) > level ||
      Math.abs(a.data[i + 1] - b.data[i + 1]) > level ||
      Math.abs(a.data[i + 2] - b.data[i + 2]) > level
    )
      differing++;
  }
  return differing / (a.width * a.height);
}

run('a branded deployment', () => {
  it("shows the operator's name and logo, the client's logo, help and privacy links; every image comes from the service", async () => {
    const { page, requests } = await brandedPrompt();
    expect(await page.locator('.brand').innerText()).toBe('Acme Credentials');
    const logoSrc = await page.locator('.brand img').getAttribute('src');
    expect(logoSrc).toMatch(/^\/ui\/images\/[A-Za-z0-9_-]{22}$/);
    expect(await page.locator('.eyebrow img.client-logo').getAttribute('src')).toMatch(/^\/ui\/images\//);
    expect(await page.locator('.eyebrow .avatar').count()).toBe(0); // the logo stands where the initial would
    expect(
      await page.locator('.foot-links a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')])),
    ).toEqual([
      ['Help', 'https://acme.example/help'],
      ['Privacy', 'https://acme.example/privacy'],
    ]);
    for (const url of requests) expect(new URL(url).origin, url).toBe(t.url);
    // the brand's colour on the primary button and as the link colour
    expect(
      await page
        .locator('.prompt-head')
        .evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()),
    ).toBe('#0b6e4f');
    // served with its type, cached for good, and inert if opened on its own
    const res = await fetch(`${t.url}${logoSrc}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');
    expect(await res.text()).toBe(SVG_LOGO);
    expect((await fetch(`${t.url}/ui/images/AAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
  });

  it("fetched the client's logo once, at start-up, however many pages show it", async () => {
    await brandedPrompt();
    await brandedPrompt();
    expect(logoFetches).toBe(1);
  });

  it("names the brand in the page's language", async () => {
    const { page } = await brandedPrompt({ locale: 'de-DE' });
    expect(await page.locator('.brand').innerText()).toBe('Acme Nachweise');
    expect(await page.locator('.foot-links').innerText()).toContain('Datenschutz');
  });

  it("passes axe with the brand's colours and logos (light and dark, 1280 and 390 px)", async () => {
    const { page } = await brandedPrompt({ bypassCSP: true });
    expect(await axeViolations(page)).toBe('');
  });

  it('looks as the stored reference does (QR code, countdown and spinner masked; small rendering differences tolerated)', async () => {
    const { page } = await brandedPrompt();
    const shot = await page.screenshot({
      animations: 'disabled',
      mask: [page.locator('.qr-code'), page.locator('#countdown'), page.locator('.status-icon')],
      maskColor: '#ff00ff',
    });
    mkdirSync('test-results', { recursive: true }); // kept beside the reference, for whoever looks into a failure
    writeFileSync('test-results/branded-prompt.png', shot);
    if (process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(REFERENCE)) {
      writeFileSync(REFERENCE, shot);
      if (process.env.UPDATE_SCREENSHOTS !== '1')
        expect.fail(`no reference screenshot at ${REFERENCE}: one was written, look at it and commit it`);
    }
    const now = PNG.sync.read(shot);
    const reference = PNG.sync.read(readFileSync(REFERENCE));
    expect([now.width, now.height]).toEqual([reference.width, reference.height]);
    expect(differingShare(now, reference)).toBeLessThan(0.005);
  });
});

run('logos at start-up', () => {
  it('refuses a logo file that is not an image or is too large, naming the path', async () => {
    await expect(startTestService(brandedConfig({ logo: join(dir, 'not-an-image.png') }))).rejects.toThrow(
      /ui\.logo: .*not-an-image\.png: not a PNG, JPEG, WebP or SVG image/,
    );
    await expect(startTestService(brandedConfig({ logo: join(dir, 'huge.png') }))).rejects.toThrow(
      /ui\.logo: .*huge\.png is larger than 256 KiB/,
    );
    await expect(startTestService(brandedConfig({ logo: join(dir, 'missing.svg') }))).rejects.toThrow(
      /ui\.logo: cannot read .*missing\.svg \(ENOENT\)/,
    );
  });

  it('leaves out a logo URL that fails (missing, too large, not an image) and starts', async () => {
    for (const path of ['/missing.png', '/huge.png', '/page.html']) {
      const s = await startTestService(brandedConfig({ clientLogo: `${logoBase}${path}` }));
      try {
        const rp = await pushIssuance(s.url, {
          clientId: 'issuer-pkce',
          secret: SECRETS.pkceIssuer,
          attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
          pin: '4821',
          redirectUri: REDIRECT,
        });
        const page = await (await browser.newContext()).newPage();
        await page.goto(rp.authorizeUrl.href);
        expect(await page.locator('.eyebrow .avatar').innerText(), path).toBe('A');
        expect(await page.locator('.eyebrow img').count(), path).toBe(0);
      } finally {
        await s.stop();
      }
    }
  });
});
