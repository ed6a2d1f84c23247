import { describe, it, expect } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { isEmail, isIsoDate, isPastCalendarDate, matchTemplate } from '../../../src/rules/template.js';
import { expectProtocolError } from './helpers.js';

const badge: CredentialType = {
  name: 'EmployeeBadge',
  validity: 'P365D',
  attributes: {
    FirstName: { type: 'string', required: true },
    Age: { type: 'number', required: true },
    Active: { type: 'boolean', required: true },
    BirthDate: { type: 'date', required: true },
    Email: { type: 'email', required: true },
    Photo: { type: 'image', required: false },
  },
};
const good = (): Record<string, unknown> => ({
  FirstName: 'Alice',
  Age: 41,
  Active: true,
  BirthDate: '1984-02-29',
  Email: 'alice@example.com',
});

describe('D8: the hint must carry every required attribute (spec Errors: TokenHint claims -> invalid_scope)', () => {
  it('accepts claims that match the template, optional attributes absent (D8)', () => {
    expect(() => matchTemplate(good(), badge)).not.toThrow();
  });

  it('accepts an optional image attribute as a string (D8)', () => {
    expect(() => matchTemplate({ ...good(), Photo: 'data:image/png;base64,AAAA' }, badge)).not.toThrow();
  });

  it('refuses a missing required attribute, naming it (D8)', () => {
    const a = good();
    delete a.Email;
    expectProtocolError(() => matchTemplate(a, badge), 'invalid_scope', 'required attribute "Email"', 'missing');
  });

  it('treats required as default true when unset (D8: "required (default true)")', () => {
    const t = { ...badge, attributes: { X: { type: 'string' } } } as unknown as CredentialType;
    expectProtocolError(() => matchTemplate({}, t), 'invalid_scope', '"X"');
  });
});

describe('D8: no attribute outside the template', () => {
  it('refuses an attribute not in the template, naming it (D8)', () => {
    expectProtocolError(
      () => matchTemplate({ ...good(), Salary: 1 }, badge),
      'invalid_scope',
      'attribute "Salary" is not in the template',
    );
  });

  it('refuses an own __proto__ claim as outside the template (D8)', () => {
    const a = Object.fromEntries([...Object.entries(good()), ['__proto__', 'x']]);
    expectProtocolError(() => matchTemplate(a, badge), 'invalid_scope', '"__proto__"');
  });

  it('does not accept inherited names such as toString as template attributes (D8)', () => {
    expectProtocolError(() => matchTemplate({ ...good(), toString: 'x' }, badge), 'invalid_scope', '"toString"');
  });
});

describe('D8: each attribute of its declared type', () => {
  const wrong: [string, unknown, string][] = [
    ['FirstName', 12, 'string'],
    ['FirstName', null, 'string'],
    ['Age', '41', 'number'],
    ['Age', null, 'number'],
    ['Active', 'true', 'boolean'],
    ['Active', 1, 'boolean'],
    ['BirthDate', 19840229, 'date'],
    ['BirthDate', '1985-02-29', 'date'],
    ['BirthDate', '2024-13-01', 'date'],
    ['BirthDate', '2024-04-31', 'date'],
    ['BirthDate', '2024-1-01', 'date'],
    ['BirthDate', '2024-01-01T10:00:00', 'date'],
    ['BirthDate', '2024-01-01T24:00:00Z', 'date'],
    ['BirthDate', '2024-01-01 10:00:00Z', 'date'],
    ['BirthDate', 'yesterday', 'date'],
    ['Email', 'not-an-email', 'email'],
    ['Email', 42, 'email'],
    ['Photo', { src: 'x' }, 'image'],
    ['Photo', null, 'image'],
  ];
  it.each(wrong)('refuses %s = %j, naming the attribute and expected type %s (D8)', (name, value, type) => {
    const e = expectProtocolError(
      () => matchTemplate({ ...good(), [name]: value }, badge),
      'invalid_scope',
      `attribute "${name}"`,
      `type ${type}`,
    );
    if (typeof value === 'string') expect(e.description).not.toContain(JSON.stringify(value));
  });

  it('accepts integer and fractional numbers (D8: number)', () => {
    expect(() => matchTemplate({ ...good(), Age: 41.5 }, badge)).not.toThrow();
    expect(() => matchTemplate({ ...good(), Age: -0 }, badge)).not.toThrow();
  });

  it('refuses non-finite numbers (D8: number)', () => {
    expectProtocolError(
      () => matchTemplate({ ...good(), Age: Number.POSITIVE_INFINITY }, badge),
      'invalid_scope',
      '"Age"',
      'number',
    );
    expectProtocolError(() => matchTemplate({ ...good(), Age: Number.NaN }, badge), 'invalid_scope', '"Age"', 'number');
  });
});

describe('D8: date is ISO 8601 (date or date-time with time zone, a real calendar date)', () => {
  it.each([
    '2024-02-29',
    '2000-02-29',
    '1999-12-31',
    '2024-01-01T10:00:00Z',
    '2024-01-01T10:00:00.123Z',
    '2024-06-30T23:59:60+02:00',
    '2024-01-01T00:00:00-05:30',
  ])('accepts %s (D8)', (v) => expect(isIsoDate(v)).toBe(true));
  it.each([
    '1900-02-29',
    '2023-02-29',
    '2024-00-10',
    '2024-01-00',
    '2024-01-32',
    '2024-01-01T10:00Z',
    '2024-01-01T10:00:00+2',
    '2024-01-01T10:60:00Z',
    '2024-01-01T10:00:00+24:00',
    '20240101',
    ' 2024-01-01',
  ])('refuses %s (D8)', (v) => expect(isIsoDate(v)).toBe(false));
});

describe('D8: email is a reasonable addr-spec', () => {
  it.each(['alice@example.com', 'a.b+tag@sub.example.co.uk', "o'brien@example.ie", 'x@ex-ample.com', 'jörg@bücher.de'])(
    'accepts %s (D8)',
    (v) => expect(isEmail(v)).toBe(true),
  );
  it.each([
    '',
    'alice',
    '@example.com',
    'alice@',
    'alice@example',
    'alice@@example.com',
    'a@b@example.com',
    'alice @example.com',
    'alice@exa mple.com',
    '.alice@example.com',
    'alice.@example.com',
    'al..ice@example.com',
    'alice@-example.com',
    'alice@example..com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.com`,
  ])('refuses %j (D8)', (v) => expect(isEmail(v)).toBe(false));
});

describe('isPastCalendarDate: a birth date (the demo PID issuer and identity provider)', () => {
  const today = new Date('2026-11-24T12:00:00Z');
  it.each(['1815-12-10', '2000-02-29', '2026-11-24'])('accepts %s', (v) =>
    expect(isPastCalendarDate(v, today)).toBe(true),
  );
  it.each(['2026-11-25', '1900-02-29', '2001-13-01', '1815-12-10T00:00:00Z', '18151210', ''])('refuses %s', (v) =>
    expect(isPastCalendarDate(v, today)).toBe(false),
  );
});
