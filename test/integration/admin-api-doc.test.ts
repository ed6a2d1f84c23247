/**
 * Issue 33 ("an operator's first hour"): docs/admin-api.yaml is what the running service's admin API does.
 * The document is read with `yaml` and its JSON Schemas are applied with Ajv (draft 2020-12, the dialect
 * of OpenAPI 3.1). Against the real service, with a credential issued through the real issuance flow:
 * every documented operation gives every status it documents, with the documented headers and a body its
 * schema accepts, and no status it does not; every route the admin router registers (ADMIN_ROUTES) is
 * documented; other methods on the documented paths get 405 with the documented methods in `Allow`, and
 * other paths under /admin get 404. An mdoc's SerialNumber (the same type, the wallet picking mso_mdoc) gives
 * the 409 of a change that reaches this service's verifier only (docs/decisions.md, "mdocs without status").
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import * as oidc from 'openid-client';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS } from '../../src/admin/credentials.js';
import { ADMIN_ROUTES } from '../../src/admin/routes.js';
import { holderCompletesIssuance, newWallet, pushIssuance } from '../helpers/flows.js';
import { REDIRECT, SECRETS, startTestService, testConfig, type TestService } from '../helpers/service.js';

const ADMIN_TOKEN = 'admin-token-for-the-doc-tests-0123456789abcdef';
const DOC_URL = new URL('../../docs/admin-api.yaml', import.meta.url);
/** The base URI the document's schemas are registered under, so that its `#/components/...` references resolve. */
const DOC_ID = 'https://admin-api.test/admin-api.yaml';
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;
type Method = (typeof METHODS)[number];
/** A percent-encoding that does not decode (an incomplete UTF-8 sequence): the documented 400. */
const UNDECODABLE = '%E0%A4%A';

interface Header {
  schema: object;
}
interface Response {
  description: string;
  headers?: Record<string, Header | { $ref: string }>;
  content?: Record<string, { schema: object; example?: unknown; examples?: Record<string, { value: unknown }> }>;
}
interface Operation {
  operationId: string;
  responses: Record<string, Response | { $ref: string }>;
}
type PathItem = Partial<Record<Method, Operation>> & { parameters?: { $ref: string }[] };
interface Doc {
  openapi: string;
  info: { version: string };
  paths: Record<string, PathItem>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
  security: Record<string, string[]>[];
}

const doc = parse(readFileSync(DOC_URL, 'utf8')) as Doc;
const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** RFC 6901 */
const pointer = (...parts: string[]) => parts.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** An object of the document and where it is, following a `$ref` to the components (OpenAPI objects, not schemas). */
function resolve<T>(value: T | { $ref: string }, at: string): { value: T; at: string } {
  if (typeof value === 'object' && value !== null && '$ref' in value) {
    const target = value.$ref.slice(1);
    const found = target
      .split('/')
      .slice(1)
      .reduce<unknown>((o, p) => (o as Record<string, unknown>)[p.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    expect(found, `${at}: ${value.$ref} resolves`).toBeDefined();
    return { value: found as T, at: target };
  }
  return { value, at };
}

// strict: a keyword Ajv does not know (a typo, an OpenAPI-only keyword inside a schema) is an error, not ignored
const ajv = new Ajv2020({ strict: true, allErrors: true });
// the document's top-level OpenAPI fields are not schema keywords; the schemas inside are reached by pointer
ajv.addVocabulary(['openapi', 'jsonSchemaDialect', 'info', 'servers', 'security', 'tags', 'paths', 'components']);
// `format: date-time` and the others asserted, not just annotations (a CommonJS module: its plugin is `.default`)
ajvFormats.default(ajv);
ajv.addSchema(doc as object, DOC_ID);
const validators = new Map<string, ValidateFunction>();
function schemaAt(at: string): ValidateFunction {
  let validate = validators.get(at);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}#${at}` });
    validators.set(at, validate);
  }
  return validate;
}
function expectValid(at: string, value: unknown, what: string): void {
  const validate = schemaAt(at);
  expect(validate(value), `${what} against ${at}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/** Every documented operation: its method, path template, and where it is in the document. */
const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({
    method,
    template,
    operation: item[method]!,
    at: pointer('paths', template, method),
  })),
);
const documentedMethods = (template: string) => METHODS.filter((m) => doc.paths[template][m]);
const pathOf = (template: string, serialNumber: string) => template.replace('{serialNumber}', serialNumber);

describe('docs/admin-api.yaml', () => {
  it('is OpenAPI 3.1 with this version of the service, behind the admin.token bearer scheme', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe(packageVersion);
    const [scheme] = Object.keys(doc.security[0]);
    expect(doc.components.securitySchemes[scheme]).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { operation, at } of operations) {
      expect(operation.operationId, at).toMatch(/^[a-zA-Z]+$/);
      expect(Object.keys(operation.responses).length, at).toBeGreaterThan(1);
    }
  });

  it('has examples its own schemas accept', () => {
    let examples = 0;
    for (const { operation, at } of operations) {
      for (const [status, raw] of Object.entries(operation.responses)) {
        const response = resolve(raw, `${at}/responses/${status}`);
        for (const [type, media] of Object.entries(response.value.content ?? {})) {
          const schema = `${response.at}${pointer('content', type, 'schema')}`;
          for (const example of [
            ...(media.example !== undefined ? [media.example] : []),
            ...Object.values(media.examples ?? {}).map((e) => e.value),
          ]) {
            expectValid(schema, example, `an example of ${at} ${status}`);
            examples++;
          }
        }
      }
    }
    expect(examples).toBeGreaterThanOrEqual(operations.length);
  });

  it('documents every route the admin router registers, and nothing it does not serve (a new route fails here until documented)', () => {
    const SAMPLE = 'SAMPLE-SERIAL';
    /** The concrete paths a route's pattern stands for: each `(a|b)` group expanded, the SerialNumber group as SAMPLE. */
    const expand = (source: string): string[] => {
      const group = /\(([^()]*)\)/.exec(source);
      if (!group) return [source];
      const options = group[1] === '[^/]+' ? [SAMPLE] : group[1].split('|');
      return options.flatMap((o) =>
        expand(source.slice(0, group.index) + o + source.slice(group.index + group[0].length)),
      );
    };
    const documented = operations.map(({ method, template }) => `${method.toUpperCase()} ${pathOf(template, SAMPLE)}`);
    for (const route of ADMIN_ROUTES) {
      const paths = expand(route.path.source.replace(/^\^/, '').replace(/\$$/, '').replaceAll('\\/', '/'));
      for (const path of paths) {
        // anything the expansion does not turn into a plain path is a pattern this test must be taught
        expect(path, `${String(route.path)} enumerates to plain paths`).toMatch(/^[/A-Za-z0-9_-]+$/);
        expect(route.path.test(path)).toBe(true);
        expect(documented, `${route.method} ${String(route.path)} is documented`).toContain(`${route.method} ${path}`);
      }
    }
    for (const action of Object.keys(ACTIONS))
      expect(documented).toContain(`POST /admin/credentials/${SAMPLE}/${action}`);
    // and the other way: every documented operation is a registered route (HEAD is GET's)
    for (const { method, template } of operations) {
      const served = ADMIN_ROUTES.some(
        (r) => r.method === (method === 'head' ? 'GET' : method.toUpperCase()) && r.path.test(pathOf(template, SAMPLE)),
      );
      expect(served, `${method.toUpperCase()} ${template} is served`).toBe(true);
    }
  });
});

describe('the running admin API answers as docs/admin-api.yaml says (issue 33)', () => {
  let t: TestService;
  let serialNumber: string;
  let mdocSerialNumber: string;
  /** operationId → the statuses the service gave it in these tests */
  const seen = new Map<string, Set<string>>();

  const send = (method: Method, path: string, token: string | null = ADMIN_TOKEN, scheme = 'Bearer') =>
    fetch(`${t.url}${path}`, {
      method: method.toUpperCase(),
      headers: token === null ? {} : { authorization: `${scheme} ${token}` },
    });

  /**
   * One request of a documented operation, checked against the document: the status is one it documents,
   * each documented header is there and its schema accepts it, and the body is JSON its schema accepts
   * (or empty where no content is documented). Returns the body.
   */
  async function exchange(
    operationId: string,
    serial: string,
    opts: { token?: string | null; scheme?: string } = {},
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
    const { method, template, operation, at } = operations.find((o) => o.operation.operationId === operationId)!;
    const res = await send(
      method,
      pathOf(template, serial),
      opts.token === undefined ? ADMIN_TOKEN : opts.token,
      opts.scheme,
    );
    const status = String(res.status);
    const text = await res.text();
    expect(Object.keys(operation.responses), `${operationId} answered ${status}: ${text}`).toContain(status);
    const response = resolve(operation.responses[status], `${at}/responses/${status}`);
    for (const [name, raw] of Object.entries(response.value.headers ?? {})) {
      const header = resolve(raw, `${response.at}/headers/${name}`);
      const value = res.headers.get(name);
      expect(value, `${operationId} ${status}: header ${name}`).not.toBeNull();
      expectValid(`${header.at}/schema`, value, `${operationId} ${status} header ${name}`);
    }
    let body: Record<string, unknown> = {};
    if (response.value.content) {
      expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
      body = JSON.parse(text) as Record<string, unknown>;
      expectValid(
        `${response.at}${pointer('content', 'application/json', 'schema')}`,
        body,
        `${operationId} ${status} body`,
      );
    } else expect(text, `${operationId} ${status} has no body`).toBe('');
    seen.set(operationId, (seen.get(operationId) ?? new Set()).add(status));
    return { status: res.status, body, headers: res.headers };
  }

  /** A real credential: the issuance flow end to end, the SerialNumber from the relying party's ID token. */
  async function issue(mdoc: boolean): Promise<string> {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: '1234',
      redirectUri: REDIRECT,
    });
    const { callbackUrl } = await holderCompletesIssuance(rp.authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet: await newWallet(),
      pin: '1234',
      ...(mdoc ? { mdoc: {} } : {}),
    });
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
    });
    return tokens.claims()!.SerialNumber as string;
  }

  beforeAll(async () => {
    // EmployeeBadge is offered as an mdoc too: the wallet picks
    const { credentialTypes } = testConfig(0) as { credentialTypes: Record<string, unknown>[] };
    t = await startTestService({
      admin: { token: ADMIN_TOKEN },
      credentialTypes: credentialTypes.map((type) =>
        type.name === 'EmployeeBadge'
          ? { ...type, mdoc: { doctype: 'org.example.badge.1', namespace: 'org.example.badge.1' } }
          : type,
      ),
    });
    serialNumber = await issue(false);
    mdocSerialNumber = await issue(true);
  });
  afterAll(async () => t?.stop());

  it('refuses every operation without the token, with another token or another scheme (401), whether or not the credential exists', async () => {
    for (const { operation } of operations) {
      for (const serial of [serialNumber, randomUUID()]) {
        const none = await exchange(operation.operationId, serial, { token: null });
        expect(none.status).toBe(401);
        expect(none.headers.get('www-authenticate')).toBe('Bearer');
        for (const wrong of [
          { token: `${ADMIN_TOKEN}x` },
          { token: ADMIN_TOKEN.slice(0, -1) },
          { token: ADMIN_TOKEN, scheme: 'Basic' },
        ]) {
          const refused = await exchange(operation.operationId, serial, wrong);
          expect(refused.status).toBe(401);
          expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
        }
      }
    }
  });

  it('answers 404 for a SerialNumber never issued, naming the parameter', async () => {
    for (const { operation, method } of operations) {
      const unknown = await exchange(operation.operationId, randomUUID());
      expect(unknown.status).toBe(404);
      if (method !== 'head') expect(unknown.body.error_description).toMatch(/^SerialNumber: /);
    }
  });

  it('answers 400 for a SerialNumber that is not a valid path segment, naming the parameter', async () => {
    for (const { operation, method } of operations) {
      const bad = await exchange(operation.operationId, UNDECODABLE);
      expect(bad.status).toBe(400);
      if (method !== 'head') expect(bad.body.error_description).toMatch(/^SerialNumber: /);
    }
  });

  it('shows, suspends, reinstates and revokes the issued credential; suspending or reinstating it once revoked is 409', async () => {
    const shown = await exchange('getCredentialStatus', serialNumber);
    expect(shown).toMatchObject({ status: 200, body: { serialNumber, status: 'valid' } });
    expect(Date.parse(shown.body.expiresAt as string)).toBeGreaterThan(Date.now());
    expect((await exchange('headCredentialStatus', serialNumber)).status).toBe(200);

    expect((await exchange('suspendCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'suspended',
      changed: true,
      format: 'dc+sd-jwt',
    });
    expect((await exchange('suspendCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'suspended',
      changed: false,
      format: 'dc+sd-jwt',
    });
    expect((await exchange('getCredentialStatus', serialNumber)).body).toMatchObject({ status: 'suspended' });
    expect((await exchange('reinstateCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'valid',
      changed: true,
      format: 'dc+sd-jwt',
    });
    expect((await exchange('reinstateCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'valid',
      changed: false,
      format: 'dc+sd-jwt',
    });

    expect((await exchange('revokeCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'revoked',
      changed: true,
      format: 'dc+sd-jwt',
    });
    expect((await exchange('revokeCredential', serialNumber)).body).toEqual({
      serialNumber,
      status: 'revoked',
      changed: false,
      format: 'dc+sd-jwt',
    });
    for (const operationId of ['suspendCredential', 'reinstateCredential']) {
      expect(await exchange(operationId, serialNumber)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    }
    expect((await exchange('getCredentialStatus', serialNumber)).body).toMatchObject({ status: 'revoked' });
  });

  it("answers 409 mdoc_without_status to an mdoc's suspension and revocation, which reach this service's verifier only; reinstating it is 200", async () => {
    const shown = await exchange('getCredentialStatus', mdocSerialNumber);
    expect(shown.body).toMatchObject({ serialNumber: mdocSerialNumber, status: 'valid', format: 'mso_mdoc' });
    const until = shown.body.expiresAt as string;
    // ARF Annex 2 VCR_01: a day at most, though the type's validity is 30 days
    expect(Date.parse(until) - Date.now()).toBeLessThanOrEqual(86_400_000);
    const description = (status: string) =>
      `SerialNumber: credential ${mdocSerialNumber} was issued as an mdoc without status, valid until ${until.replace(/\.\d{3}Z$/, 'Z')}: it is ${status} for this service's verifier only, and other verifiers accept it until then`;

    expect(await exchange('suspendCredential', mdocSerialNumber)).toMatchObject({
      status: 409,
      body: {
        error: 'mdoc_without_status',
        error_description: description('suspended'),
        serialNumber: mdocSerialNumber,
        status: 'suspended',
        changed: true,
        format: 'mso_mdoc',
        expiresAt: until,
      },
    });
    expect((await exchange('getCredentialStatus', mdocSerialNumber)).body).toMatchObject({ status: 'suspended' });
    expect(await exchange('reinstateCredential', mdocSerialNumber)).toMatchObject({
      status: 200,
      body: { serialNumber: mdocSerialNumber, status: 'valid', changed: true, format: 'mso_mdoc' },
    });
    for (const changed of [true, false]) {
      expect(await exchange('revokeCredential', mdocSerialNumber)).toMatchObject({
        status: 409,
        body: { error: 'mdoc_without_status', error_description: description('revoked'), status: 'revoked', changed },
      });
    }
    // revocation is final for the mdoc too
    expect(await exchange('reinstateCredential', mdocSerialNumber)).toMatchObject({
      status: 409,
      body: { error: 'conflict' },
    });
    expect((await exchange('getCredentialStatus', mdocSerialNumber)).body).toMatchObject({
      status: 'revoked',
      format: 'mso_mdoc',
    });
  });

  it('gave every status the document lists for each operation', () => {
    for (const { operation } of operations) {
      expect([...(seen.get(operation.operationId) ?? [])].sort(), operation.operationId).toEqual(
        Object.keys(operation.responses).sort(),
      );
    }
  });

  it('answers 405 with the documented methods in Allow to any other method on a documented path, with or without the token', async () => {
    for (const template of Object.keys(doc.paths)) {
      const allowed = documentedMethods(template);
      for (const method of METHODS.filter((m) => !allowed.includes(m))) {
        for (const token of [ADMIN_TOKEN, null]) {
          const res = await send(method, pathOf(template, encodeURIComponent(serialNumber)), token);
          expect(res.status, `${method} ${template}`).toBe(405);
          // HEAD is GET's: the router names GET only
          expect(res.headers.get('allow')?.split(', ').sort(), `${method} ${template}`).toEqual(
            allowed
              .filter((m) => m !== 'head')
              .map((m) => m.toUpperCase())
              .sort(),
          );
          if (method !== 'head') expect(await res.json()).toMatchObject({ error: 'invalid_request' });
        }
      }
    }
  });

  it('answers 404 to every other path under /admin, even with the token', async () => {
    const s = encodeURIComponent(serialNumber);
    const others = [
      '/admin',
      '/admin/',
      '/admin/credentials',
      '/admin/credentials/',
      `/admin/credentials/${s}/`,
      `/admin/credentials/${s}/destroy`,
      `/admin/credentials/${s}/status`,
      `/admin/credentials/${s}/REVOKE`,
      `/admin/credentials/${s}/revoke/`,
      `/admin/credentials/${s}/revoke/now`,
      `/admin/credentials/${s}//revoke`,
      `/admin/credentials//${s}`,
      '/admin/tokens',
      '/admin/status',
      `/admin/${s}/revoke`,
      `/admin/credential/${s}`,
    ];
    for (const path of others) {
      for (const method of ['get', 'post', 'delete'] as const) {
        const res = await send(method, path);
        expect(res.status, `${method} ${path}`).toBe(404);
        await res.body?.cancel();
      }
    }
  });

  it('has no documented path at all without admin.token (404)', async () => {
    const plain = await startTestService();
    try {
      for (const { method, template } of operations) {
        const res = await fetch(`${plain.url}${pathOf(template, randomUUID())}`, {
          method: method.toUpperCase(),
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        expect(res.status, `${method} ${template}`).toBe(404);
        await res.body?.cancel();
      }
    } finally {
      await plain.stop();
    }
  });
});
