import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from '../../../src/config/jsonSchema.js';

const COMMITTED = fileURLToPath(new URL('../../../config/config.schema.json', import.meta.url));

describe('D15: the project publishes the config file JSON Schema', () => {
  it('is a JSON Schema object describing the top-level settings', () => {
    const schema = configJsonSchema() as {
      $schema?: string;
      type?: string;
      properties?: Record<string, unknown>;
      required?: string[];
      additionalProperties?: unknown;
    };
    expect(schema.$schema).toMatch(/json-schema\.org/);
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties ?? {})).toEqual(
      expect.arrayContaining([
        'baseUrl',
        'port',
        'store',
        'keys',
        'lifetimes',
        'credentialTypes',
        'clients',
        'trustedIssuers',
        'rfc6749Errors',
      ]),
    );
    expect(schema.required).toEqual(expect.arrayContaining(['baseUrl', 'credentialTypes', 'clients']));
    // unknown keys are rejected by the loader, so editors must flag them too
    expect(schema.additionalProperties).toBe(false);
  });

  it('is plain JSON (serialises and parses back unchanged)', () => {
    const schema = configJsonSchema();
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('describes a client with its fields', () => {
    const schema = configJsonSchema() as any;
    const client = schema.properties.clients.items;
    expect(Object.keys(client.properties)).toEqual(
      expect.arrayContaining(['clientId', 'clientSecret', 'redirectUris', 'pkce', 'scopes', 'expiresInAsString']),
    );
    expect(client.required).toEqual(expect.arrayContaining(['clientId', 'clientSecret', 'redirectUris', 'scopes']));
  });

  it('matches the committed config/config.schema.json', () => {
    if (!existsSync(COMMITTED)) {
      expect.fail('config/config.schema.json does not exist: run `npm run config-schema` and commit the file');
    }
    const committed = JSON.parse(readFileSync(COMMITTED, 'utf8'));
    expect(committed, 'config/config.schema.json is out of date: run `npm run config-schema`').toEqual(
      configJsonSchema(),
    );
  });
});
