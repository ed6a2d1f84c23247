import type { AttributeSpec, CredentialType } from '../config/schema.js';
import { invalidScope } from './errors.js';
import { shown } from './text.js';

/**
 * Matches the hint's custom claims against the credential template (spec Errors: TokenHint claims "Do
 * not match the credential template" -> invalid_scope; D8). Descriptions name attributes and types,
 * never values.
 */
export function matchTemplate(attributes: Record<string, unknown>, type: CredentialType): void {
  const template = type.attributes;
  // D8: no attribute outside the template
  for (const name of Object.keys(attributes)) {
    if (!Object.hasOwn(template, name)) {
      throw invalidScope(
        `id_token_hint: attribute ${shown(name)} is not in the template of credential type ${type.name}`,
      );
    }
  }
  for (const [name, spec] of Object.entries(template)) {
    const present = Object.hasOwn(attributes, name) && attributes[name] !== undefined;
    // D8: the hint must carry every required attribute (required defaults to true)
    if (!present) {
      if (spec.required !== false) {
        throw invalidScope(
          `id_token_hint: required attribute ${shown(name)} of credential type ${type.name} is missing`,
        );
      }
      continue;
    }
    // D8: each attribute of its declared type (null is a wrong type)
    if (!hasType(attributes[name], spec.type)) {
      throw invalidScope(
        `id_token_hint: attribute ${shown(name)} must be of type ${spec.type}${TYPE_HINTS[spec.type]}`,
      );
    }
  }
}

const TYPE_HINTS: Record<AttributeSpec['type'], string> = {
  string: ' (a JSON string)',
  number: ' (a JSON number)',
  boolean: ' (true or false)',
  date: ' (ISO 8601 YYYY-MM-DD, or a date-time with time zone)',
  email: ' (an e-mail address)',
  image: ' (a data: URI string)',
};

function hasType(value: unknown, type: AttributeSpec['type']): boolean {
  switch (type) {
    case 'string':
    case 'image': // D9: content is checked by images.ts
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && isIsoDate(value);
    case 'email':
      return typeof value === 'string' && isEmail(value);
    default:
      return false;
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** D8: ISO 8601 calendar date `YYYY-MM-DD`, or a date-time with a time zone (RFC 3339 5.6). */
export function isIsoDate(value: string): boolean {
  const d = DATE.exec(value);
  if (d) return isCalendarDate(+d[1], +d[2], +d[3]);
  const t = DATE_TIME.exec(value);
  if (!t) return false;
  const [, y, mo, da, h, mi, s, sign, oh, om] = t;
  if (!isCalendarDate(+y, +mo, +da)) return false;
  if (+h > 23 || +mi > 59 || +s > 60) return false; // RFC 3339 allows a leap second
  if (sign && (+oh > 23 || +om > 59)) return false;
  return true;
}

/** A calendar date `YYYY-MM-DD` that is not in the future (a birth date). */
export function isPastCalendarDate(value: string, now = new Date()): boolean {
  const d = DATE.exec(value);
  // four-digit years: the ISO form compares as text
  return d !== null && isCalendarDate(+d[1], +d[2], +d[3]) && value <= now.toISOString().slice(0, 10);
}

function isCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  return d <= days;
}

const LOCAL_PART = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/**
 * D8: a reasonable RFC 5322 addr-spec: one @, non-empty dot-atom local part (<= 64), a domain of at
 * least two labels, no whitespace, at most 254 characters (RFC 5321 4.5.3.1).
 */
export function isEmail(value: string): boolean {
  if (value.length > 254 || /\s/.test(value)) return false;
  const at = value.indexOf('@');
  if (at <= 0 || at !== value.lastIndexOf('@')) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > 64 || !LOCAL_PART.test(local)) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((l) => DOMAIN_LABEL.test(l));
}
