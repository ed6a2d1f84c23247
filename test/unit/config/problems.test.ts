import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { loadConfig, validateConfig } from '../../../src/config/load.js';
import { knownKeys, nearest } from '../../../src/config/problems.js';
import { configSchema } from '../../../src/config/schema.js';
import { minimalDoc, problemsOf as loadProblems, tempDir } from './fixtures.js';

const problemsOf = (doc: unknown): string[] => {
  try {
    validateConfig(doc);
  } catch (err) {
    return (err as { problems: string[] }).problems;
  }
  return [];
};

describe('issue 33: check-config says where and what, as an operator reads it', () => {
  it('names a client by its clientId beside its index, and a credential type by its name', () => {
    const doc = minimalDoc();
    doc.clients.push({ ...doc.clients[0], clientId: 'club-portal', clientSecret: 'short' });
    doc.credentialTypes[0].validity = 'one year';
    expect(problemsOf(doc)).toEqual([
      'credentialTypes[0] (name EmployeeBadge).validity: must be an ISO 8601 duration such as P365D',
      'clients[1] (clientId club-portal).clientSecret: must be at least 16 characters',
    ]);
  });

  it('says which config path an unset ${VAR} was for, in lists and nested blocks alike', async () => {
    const tmp = await tempDir();
    try {
      const doc = minimalDoc();
      doc.clients[0].redirectUris = ['${PORTAL_URL}/callback'];
      doc.keys = { cookies: '${KEY_DIR}/cookies.json' };
      const file = await tmp.write('config.yaml', toYaml(doc));
      const problems = await loadProblems(() => loadConfig(file, {}));
      expect(problems).toContain(
        'clients[0] (clientId hr-portal).redirectUris[0]: environment variable PORTAL_URL is not set',
      );
      expect(problems).toContain('keys.cookies: environment variable KEY_DIR is not set');
    } finally {
      await tmp.cleanup();
    }
  });

  it('suggests the nearest known key for an unknown one, at any depth; none when nothing is near', () => {
    const doc = minimalDoc();
    doc.clients[0].clientSecert = doc.clients[0].clientSecret;
    delete doc.clients[0].clientSecret;
    doc.credentialTypes[0].attributes.FirstName.requird = false;
    doc.logLevl = 'debug';
    doc.somethingElse = true;
    const problems = problemsOf(doc);
    expect(problems).toContain(
      'clients[0] (clientId hr-portal): Unrecognized key: "clientSecert"; clientSecert: did you mean clientSecret?',
    );
    expect(problems).toContain(
      'credentialTypes[0] (name EmployeeBadge).attributes.FirstName: Unrecognized key: "requird"; requird: did you mean required?',
    );
    expect(problems.find((p) => p.startsWith('(root)'))).toBe(
      '(root): Unrecognized keys: "logLevl", "somethingElse"; logLevl: did you mean logLevel?',
    );
  });

  it('knows the keys of nested, optional and defaulted objects from the schema itself', () => {
    expect(knownKeys(configSchema, [])).toEqual(
      expect.arrayContaining(['baseUrl', 'clients', 'credentialTypes', 'keys', 'logLevel']),
    );
    expect(knownKeys(configSchema, ['clients', 0])).toEqual(
      expect.arrayContaining(['clientId', 'clientSecret', 'redirectUris', 'scopes']),
    );
    expect(knownKeys(configSchema, ['keys'])).toEqual(
      expect.arrayContaining(['idToken', 'credential', 'cookies', 'pairwise', 'generate']),
    );
    expect(knownKeys(configSchema, ['baseUrl'])).toEqual([]);
  });

  it('takes typos (a letter missing, added, changed, or two swapped) but not other words', () => {
    expect(nearest('clientScret', ['clientSecret', 'clientId'])).toBe('clientSecret');
    expect(nearest('clientSecrets', ['clientSecret'])).toBe('clientSecret');
    expect(nearest('clinetId', ['clientId', 'clientName'])).toBe('clientId');
    expect(nearest('color', ['colours', 'logo'])).toBeUndefined();
  });
});
