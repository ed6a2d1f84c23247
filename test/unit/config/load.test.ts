import { afterEach, beforeEach, describe, it, expect } from 'vitest';
import { resolve } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { ConfigError, loadConfig, validateConfig } from '../../../src/config/load.js';
import { minimalDoc, problemsOf, tempDir } from './fixtures.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const YAML_CONFIG = `
baseUrl: https://vc.example.com
port: 4000
credentialTypes:
  - name: EmployeeBadge
    validity: P365D
    pinCodeLength: 4
    attributes:
      FirstName: { type: string }
      Photo: { type: image, required: false }
clients:
  - clientId: hr-portal
    clientSecret: \${HR_PORTAL_SECRET}
    redirectUris: [https://hr.example.com/callback]
    pkce: required
    scopes: [issue.EmployeeBadge, EmployeeBadge]
`;

describe('D15: one YAML or JSON file', () => {
  it('loads a YAML file, fills defaults and reports where it came from', async () => {
    const file = await tmp.write('config.yaml', YAML_CONFIG);
    const loaded = await loadConfig(file, { HR_PORTAL_SECRET: 'a-secret-from-the-environment' });
    expect(loaded.file).toBe(resolve(file));
    expect(loaded.baseDir).toBe(tmp.dir);
    const { config } = loaded;
    expect(config.baseUrl).toBe('https://vc.example.com');
    expect(config.port).toBe(4000);
    expect(config.store).toBe('memory');
    expect(config.lifetimes).toEqual({ par: 60, code: 60, token: 60, offer: 300, interaction: 600, continuation: 300 });
    expect(config.credentialTypes[0].pinCodeLength).toBe(4);
    expect(config.credentialTypes[0].attributes.FirstName).toEqual({ type: 'string', required: true });
    expect(config.credentialTypes[0].attributes.Photo).toMatchObject({ type: 'image', required: false });
    expect(config.clients[0]).toMatchObject({
      clientId: 'hr-portal',
      clientSecret: 'a-secret-from-the-environment',
      pkce: 'required',
      pkceMethods: ['S256', 'plain'],
      expiresInAsString: false,
      legacyV2Issuer: false,
    });
    expect(config.rfc6749Errors).toBe(false);
    // the interface's defaults: both versions, Version 2's issuer {base_url}
    expect(config.versions).toEqual({ v1: true, v2Issuer: 'base', v1ParDocument: 'interface' });
  });

  it('loads a JSON file the same way', async () => {
    const doc = minimalDoc();
    const file = await tmp.write('config.json', JSON.stringify(doc, null, 2));
    const { config } = await loadConfig(file, {});
    expect(config.baseUrl).toBe('https://vc.example.com');
    expect(config.clients.map((c) => c.clientId)).toEqual(['hr-portal']);
    expect(config.credentialTypes.map((t) => t.name)).toEqual(['EmployeeBadge']);
    expect(config.credentialTypes[0].validity).toBe('P365D');
  });

  it('reports a file that cannot be read, naming the file', async () => {
    const missing = resolve(tmp.dir, 'nope.yaml');
    const problems = await problemsOf(() => loadConfig(missing, {}));
    expect(problems).toEqual(['cannot read file: ENOENT']);
    await expect(loadConfig(missing, {})).rejects.toThrow(missing);
  });

  it('reports a file that is not YAML/JSON', async () => {
    const file = await tmp.write('broken.yaml', 'baseUrl: [unclosed\n  clients: {');
    const problems = await problemsOf(() => loadConfig(file, {}));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^not valid YAML\/JSON: /);
  });
});

describe('D15: ${VAR} substitutes environment variables', () => {
  it('substitutes ${VAR} from the given environment', async () => {
    const doc = minimalDoc();
    doc.clients[0].clientSecret = '${SECRET}';
    doc.baseUrl = 'https://${HOST_NAME}';
    const file = await tmp.write('config.yaml', toYaml(doc));
    const { config } = await loadConfig(file, { SECRET: 'from-env-0123456789', HOST_NAME: 'vc.example.org' });
    expect(config.clients[0].clientSecret).toBe('from-env-0123456789');
    expect(config.baseUrl).toBe('https://vc.example.org');
  });

  it('uses the ${VAR:-default} fallback only when VAR is unset or empty', async () => {
    const doc = minimalDoc();
    doc.clients[0].clientSecret = '${SECRET:-fallback-secret-0123456789}';
    const file = await tmp.write('config.yaml', toYaml(doc));
    expect((await loadConfig(file, {})).config.clients[0].clientSecret).toBe('fallback-secret-0123456789');
    expect((await loadConfig(file, { SECRET: '' })).config.clients[0].clientSecret).toBe('fallback-secret-0123456789');
    expect((await loadConfig(file, { SECRET: 'set-in-env-0123456789' })).config.clients[0].clientSecret).toBe(
      'set-in-env-0123456789',
    );
  });

  it('reports a missing variable by name instead of using an empty string', async () => {
    const doc = minimalDoc();
    doc.clients[0].clientSecret = '${HR_PORTAL_SECRET}';
    const file = await tmp.write('config.yaml', toYaml(doc));
    const problems = await problemsOf(() => loadConfig(file, {}));
    expect(problems).toContain(
      'clients[0] (clientId hr-portal).clientSecret: environment variable HR_PORTAL_SECRET is not set',
    );
  });

  it('reports a missing variable even when the rest of the file is valid', async () => {
    const doc = minimalDoc();
    doc.clients[0].clientName = 'Portal ${TENANT}';
    const file = await tmp.write('config.yaml', toYaml(doc));
    const problems = await problemsOf(() => loadConfig(file, {}));
    expect(problems).toEqual(['clients[0] (clientId hr-portal).clientName: environment variable TENANT is not set']);
  });

  it('keeps a substituted secret verbatim, even when it contains YAML-significant characters', async () => {
    // BUG (src/config/load.ts): substitution happens on the raw file text before parsing, so a value
    // containing " #" is cut at the comment, and one starting with "@", "*", "&" or "!" breaks the parse.
    const file = await tmp.write(
      'config.yaml',
      `baseUrl: https://vc.example.com
credentialTypes:
  - name: EmployeeBadge
    attributes: { FirstName: { type: string } }
clients:
  - clientId: hr-portal
    clientSecret: \${HR_PORTAL_SECRET}
    redirectUris: [https://hr.example.com/callback]
    scopes: [issue.EmployeeBadge]
`,
    );
    const secret = 'pa55word-with #hash and: colon';
    const { config } = await loadConfig(file, { HR_PORTAL_SECRET: secret });
    expect(config.clients[0].clientSecret).toBe(secret);
  });

  it('ignores ${VAR} written inside a YAML comment', async () => {
    // config/demo.yaml has one: substitution runs over values only
    const file = await tmp.write(
      'config.yaml',
      `# secrets come from the environment: \${VAR}\n${toYaml(minimalDoc())}`,
    );
    const { config } = await loadConfig(file, {});
    expect(config.clients[0].clientId).toBe('hr-portal');
  });
});

describe('D15: PORT and BASE_URL in the environment override the file', () => {
  it('takes port and baseUrl from PORT and BASE_URL', async () => {
    const file = await tmp.write('config.yaml', toYaml({ ...minimalDoc(), port: 3000 }));
    const { config } = await loadConfig(file, { PORT: '8443', BASE_URL: 'https://public.example.net/' });
    expect(config.port).toBe(8443);
    expect(config.baseUrl).toBe('https://public.example.net');
  });

  it('keeps the file values when PORT and BASE_URL are not set', async () => {
    const file = await tmp.write('config.yaml', toYaml({ ...minimalDoc(), port: 3100 }));
    const { config } = await loadConfig(file, {});
    expect(config.port).toBe(3100);
    expect(config.baseUrl).toBe('https://vc.example.com');
  });

  it('reports an invalid PORT at the port path', async () => {
    const file = await tmp.write('config.yaml', toYaml(minimalDoc()));
    const problems = await problemsOf(() => loadConfig(file, { PORT: 'eighty' }));
    expect(problems.some((p) => p.startsWith('port: '))).toBe(true);
  });
});

describe('D15: the base URL', () => {
  it('removes a trailing slash from baseUrl (so endpoint URLs have no //)', async () => {
    const file = await tmp.write(
      'config.yaml',
      toYaml({ ...minimalDoc(), baseUrl: 'https://vc.example.com/tenant//' }),
    );
    const { config } = await loadConfig(file, {});
    expect(config.baseUrl).toBe('https://vc.example.com/tenant');
  });

  it('refuses a baseUrl that is not an absolute http(s) URL', () => {
    for (const baseUrl of ['vc.example.com', '/relative', 'ftp://vc.example.com']) {
      expect(() => validateConfig({ ...minimalDoc(), baseUrl })).toThrow(/baseUrl: must be an absolute http\(s\) URL/);
    }
  });
});

describe('D15: an invalid file stops the start with every problem listed by its path', () => {
  it('lists the problems of two wrong clients at once, each with its path', async () => {
    const doc = minimalDoc();
    doc.clients[0].redirectUris = ['not-a-url'];
    doc.clients.push({
      ...doc.clients[0],
      clientId: 'second',
      redirectUris: ['https://b.example/cb'],
      clientSecret: 'short',
    });
    const file = await tmp.write('config.yaml', toYaml(doc));
    const problems = await problemsOf(() => loadConfig(file, {}));
    expect(problems).toEqual([
      'clients[0] (clientId hr-portal).redirectUris[0]: must be an absolute http(s) URL',
      'clients[1] (clientId second).clientSecret: must be at least 16 characters',
    ]);
  });

  it('puts every problem into the error message, one per line, after the file name', async () => {
    const doc = minimalDoc();
    doc.clients[0].redirectUris = ['not-a-url'];
    doc.clients[0].pkce = 'always';
    const file = await tmp.write('config.yaml', toYaml(doc));
    let err: ConfigError | undefined;
    try {
      await loadConfig(file, {});
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message.split('\n')[0]).toBe(`${resolve(file)}: invalid configuration`);
    expect(err!.message).toContain(
      '  - clients[0] (clientId hr-portal).redirectUris[0]: must be an absolute http(s) URL',
    );
    expect(err!.message).toContain('  - clients[0] (clientId hr-portal).pkce: ');
  });

  it('reports a missing variable together with the schema problems it causes', async () => {
    const doc = minimalDoc();
    doc.clients[0].clientSecret = '${MISSING_SECRET}';
    doc.clients[0].redirectUris = ['nope'];
    const file = await tmp.write('config.yaml', toYaml(doc));
    const problems = await problemsOf(() => loadConfig(file, {}));
    expect(problems).toContain(
      'clients[0] (clientId hr-portal).clientSecret: environment variable MISSING_SECRET is not set',
    );
    expect(problems).toContain('clients[0] (clientId hr-portal).redirectUris[0]: must be an absolute http(s) URL');
    // the emptied value is reported at its path too
    expect(problems.some((p) => p.startsWith('clients[0] (clientId hr-portal).clientSecret: '))).toBe(true);
  });

  it('rejects unknown keys at the root and inside a client, naming the key', () => {
    const doc = minimalDoc();
    doc.baseURL = 'https://typo.example';
    doc.clients[0].redirectUri = 'https://hr.example.com/callback';
    const problems = problemsOfSync(() => validateConfig(doc));
    expect(problems).toContain('(root): Unrecognized key: "baseURL"; baseURL: did you mean baseUrl?');
    expect(problems).toContain(
      'clients[0] (clientId hr-portal): Unrecognized key: "redirectUri"; redirectUri: did you mean redirectUris?',
    );
  });

  it('rejects unknown keys inside a credential type and an attribute', () => {
    const doc = minimalDoc();
    doc.credentialTypes[0].pinLength = 4;
    doc.credentialTypes[0].attributes.FirstName.optional = true;
    const problems = problemsOfSync(() => validateConfig(doc));
    expect(problems).toContain('credentialTypes[0] (name EmployeeBadge): Unrecognized key: "pinLength"');
    expect(problems).toContain(
      'credentialTypes[0] (name EmployeeBadge).attributes.FirstName: Unrecognized key: "optional"',
    );
  });

  it('rejects duplicate client ids, naming the second occurrence', () => {
    const doc = minimalDoc();
    doc.clients.push({ ...doc.clients[0] });
    expect(problemsOfSync(() => validateConfig(doc))).toEqual([
      'clients[1] (clientId hr-portal).clientId: duplicate client hr-portal',
    ]);
  });

  it('rejects a client_id or client_secret outside printable ASCII (RFC 6749 Appendix A: VSCHAR)', () => {
    const doc = minimalDoc();
    doc.clients[0].clientId = 'hr-portäl';
    doc.clients[0].clientSecret = 'hr-portal-secret-0123456789\n';
    const problems = problemsOfSync(() => validateConfig(doc));
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(p).toContain('must be printable ASCII (RFC 6749 Appendix A');
    // a space and reserved characters are VSCHAR: form-urlencoded in client_secret_basic (RFC 6749 2.3.1)
    doc.clients[0].clientId = 'hr portal:1';
    doc.clients[0].clientSecret = 'a secret with: + % & = characters';
    expect(validateConfig(doc).clients[0].clientId).toBe('hr portal:1');
  });

  it('versions: v1 a boolean, v2Issuer base or v2.0 (OIDC Discovery 1.0 section 4), nothing else', () => {
    const doc = minimalDoc();
    doc.versions = { v1: false, v2Issuer: 'v2.0', v1ParDocument: 'oidc-discovery' };
    expect(validateConfig(doc).versions).toEqual({ v1: false, v2Issuer: 'v2.0', v1ParDocument: 'oidc-discovery' });
    doc.versions = { v1: 'no', v2Issuer: '/v2.0', v3: true };
    const problems = problemsOfSync(() => validateConfig(doc));
    expect(problems.some((p) => p.startsWith('versions.v1'))).toBe(true);
    expect(problems.some((p) => p.startsWith('versions.v2Issuer'))).toBe(true);
    expect(problems.some((p) => p.includes('"v3"'))).toBe(true);
  });

  it('rejects duplicate credential types, naming the second occurrence', () => {
    const doc = minimalDoc();
    doc.credentialTypes.push({ ...doc.credentialTypes[0] });
    expect(problemsOfSync(() => validateConfig(doc))).toEqual([
      'credentialTypes[1] (name EmployeeBadge).name: duplicate credential type EmployeeBadge',
    ]);
  });

  it('rejects a client scope naming an unknown credential type (issue.<Type> and <Type>)', () => {
    const doc = minimalDoc();
    doc.clients[0].scopes = ['issue.EmployeeBadge', 'issue.Passport', 'DriversLicence'];
    expect(problemsOfSync(() => validateConfig(doc))).toEqual([
      'clients[0] (clientId hr-portal).scopes[1]: unknown credential type Passport',
      'clients[0] (clientId hr-portal).scopes[2]: unknown credential type DriversLicence',
    ]);
  });

  it.each(['sub', 'exp', 'SerialNumber', 'ExpiresAt', 'PinCode', 'iss', 'nonce', 'cnf', 'vct', 'status', '_sd'])(
    'rejects the reserved attribute name %s (one list: src/rules/claimNames.ts)',
    (name) => {
      const doc = minimalDoc();
      doc.credentialTypes[0].attributes[name] = { type: 'string' };
      expect(problemsOfSync(() => validateConfig(doc))).toEqual([
        `credentialTypes[0] (name EmployeeBadge).attributes.${name}: ${name} is a reserved claim name`,
      ]);
    },
  );

  it('rejects formats/maxBytes on an attribute that is not an image (D9)', () => {
    const doc = minimalDoc();
    doc.credentialTypes[0].attributes.FirstName.maxBytes = 1000;
    expect(problemsOfSync(() => validateConfig(doc))).toEqual([
      'credentialTypes[0] (name EmployeeBadge).attributes.FirstName: formats and maxBytes apply to image attributes only',
    ]);
  });

  it('rejects a credential type without attributes and an invalid validity duration', () => {
    const doc = minimalDoc();
    doc.credentialTypes[0].attributes = {};
    doc.credentialTypes[0].validity = '365 days';
    const problems = problemsOfSync(() => validateConfig(doc));
    expect(problems).toContain(
      'credentialTypes[0] (name EmployeeBadge).attributes: must declare at least one attribute',
    );
    expect(problems).toContain(
      'credentialTypes[0] (name EmployeeBadge).validity: must be an ISO 8601 duration such as P365D',
    );
  });

  it('requires at least one client and one credential type', () => {
    const problems = problemsOfSync(() =>
      validateConfig({ baseUrl: 'https://vc.example.com', clients: [], credentialTypes: [] }),
    );
    expect(problems.some((p) => p.startsWith('clients: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('credentialTypes: '))).toBe(true);
  });
});

function problemsOfSync(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}
