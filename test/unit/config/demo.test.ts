import { describe, it, expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/config/load.js';

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
});
