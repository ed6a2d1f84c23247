import { describe, it, expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../../src/config/load.js';
import { HolderUi } from '../../../src/ui/ui.js';

const DEMO = fileURLToPath(new URL('../../../config/demo.yaml', import.meta.url));

/** Loads the demo config as `npm start` does on a fresh machine: no environment. */
const demo = async () => (await loadConfig(DEMO, {})).config;

describe('config/demo.yaml: the embedded demo starts without any environment (D15, D14)', () => {
  it('loads with an empty environment', async () => {
    const { config } = await loadConfig(DEMO, {});
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.store).toBe('memory');
  });

  it('uses its defaults: memory store, localhost base URL, demo enabled', async () => {
    const config = await demo();
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.store).toBe('memory');
    expect(config.demo).toBe(true);
  });

  it('has a PIN-protected credential type (spec: Authentication 7)', async () => {
    const config = await demo();
    const pinTypes = config.credentialTypes.filter((t) => typeof t.pinCodeLength === 'number');
    expect(pinTypes.length).toBeGreaterThan(0);
    expect(pinTypes[0].pinCodeLength).toBeGreaterThan(0);
  });

  it('has a credential type with an image attribute (D9)', async () => {
    const config = await demo();
    const withImage = config.credentialTypes.filter((t) => Object.values(t.attributes).some((a) => a.type === 'image'));
    expect(withImage.length).toBeGreaterThan(0);
  });

  it('has a client with PKCE required and one without (D5)', async () => {
    const config = await demo();
    expect(config.clients.some((c) => c.pkce === 'required')).toBe(true);
    expect(config.clients.some((c) => c.pkce === 'optional')).toBe(true);
  });

  it('takes the demo secrets from the environment when they are set', async () => {
    const { config } = await loadConfig(DEMO, { DEMO_ISSUER_SECRET: 'from-the-environment-123' });
    expect(config.clients.find((c) => c.clientId === 'demo-issuer')?.clientSecret).toBe('from-the-environment-123');
  });

  it('carries a card with a logo on each issued type, whose images the start-up reads (issue 49)', async () => {
    const loaded = await loadConfig(DEMO, {});
    // AgeOver18 is verified only (an mDL others issue): no card of ours
    const issued = loaded.config.credentialTypes.filter((type) => !type.verifyOnly);
    expect(issued.map((type) => type.name)).toEqual(['EmployeeBadge', 'MembershipCard']);
    for (const type of issued) {
      expect(type.card?.logo?.image, type.name).toBeDefined();
      expect(type.card?.backgroundColor, type.name).toMatch(/^#/);
    }
    const ui = await HolderUi.load(loaded.config, loaded.baseDir);
    expect([...ui.cardImages.values()].map((i) => i.type)).toEqual(['image/png', 'image/png']);
  });
});

/**
 * The demo publishes its secrets and its PID issuer signs whatever a visitor asks: `demo: true` on a base URL
 * that is not this machine is refused unless `demoOnPublicUrl` (DEMO_ON_PUBLIC_URL) says so.
 */
describe('config/demo.yaml on a base URL that is not this machine', () => {
  const problems = async (env: Record<string, string>) =>
    loadConfig(DEMO, env).then(
      () => [],
      (err: ConfigError) => err.problems,
    );

  it.each([
    ['npm start', {}],
    ['compose.yaml', { BASE_URL: 'http://localhost:8080', HOST: '0.0.0.0', STORE: 'redis://redis:6379/0' }],
    ['127.0.0.1', { BASE_URL: 'http://127.0.0.1:3000' }],
    ['[::1]', { BASE_URL: 'http://[::1]:3000' }],
    ['a .localhost name', { BASE_URL: 'http://vc.localhost:3000' }],
  ])('loads on a loopback base URL (%s)', async (_, env) => {
    expect(await problems(env)).toEqual([]);
  });

  it('is refused on another host, naming the setting', async () => {
    const found = await problems({ BASE_URL: 'https://vc.example.net' });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^demo: is true on a base URL that is not this machine \(vc\.example\.net\)/);
    expect(found[0]).toContain('demoOnPublicUrl: true (DEMO_ON_PUBLIC_URL=true with config/demo.yaml)');
  });

  it('loads there when the operator says so', async () => {
    const { config } = await loadConfig(DEMO, { BASE_URL: 'https://vc.example.net', DEMO_ON_PUBLIC_URL: 'true' });
    expect(config.demoOnPublicUrl).toBe(true);
    expect(await problems({ BASE_URL: 'https://vc.example.net', DEMO_ON_PUBLIC_URL: 'false' })).toHaveLength(1);
  });
});
