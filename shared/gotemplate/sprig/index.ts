/**
 * The function map: Go's builtins plus sprig v3.2.3's TxtFuncMap as Debian's
 * golang-github-masterminds-sprig-dev ships it, minus env, expandenv and getHostByName (removed,
 * as Helm does: on Lambda the environment holds credentials). A sprig function not listed here is
 * not implemented, and using it is the parse error Go gives for an unknown function, so a
 * template never renders differently: see NOT_IMPLEMENTED.
 */
import { BUILTINS } from '../builtins.ts';
import type { FuncEntry } from '../exec.ts';
import { DATE_FUNCS } from './date.ts';
import { DEFAULT_FUNCS } from './defaults.ts';
import { DICT_FUNCS } from './dicts.ts';
import { LIST_FUNCS } from './lists.ts';
import { MISC_FUNCS } from './misc.ts';
import { NUMERIC_FUNCS } from './numeric.ts';
import { SEMVER_FUNCS } from './semver.ts';
import { STRING_FUNCS } from './strings.ts';

/** Removed on purpose (Helm removes them too). */
export const REMOVED = ['env', 'expandenv', 'getHostByName'];

/** Sprig functions we do not provide (yet): calling one is `function "x" not defined`. */
export const NOT_IMPLEMENTED = [
  // parsing dates (Go's time.Parse)
  'mustToDate',
  'toDate',
  // word-case conversions of xstrings
  'snakecase',
  'camelcase',
  'kebabcase',
  // certificates, keys and password hashing
  'bcrypt',
  'htpasswd',
  'genPrivateKey',
  'derivePassword',
  'buildCustomCert',
  'genCA',
  'genCAWithKey',
  'genSelfSignedCert',
  'genSelfSignedCertWithKey',
  'genSignedCert',
  'genSignedCertWithKey',
  'encryptAES',
  'decryptAES',
  // URLs
  'urlParse',
  'urlJoin',
];

let funcs: Map<string, FuncEntry> | undefined;

/** Every function a template can call, by name. */
export function funcMap(): Map<string, FuncEntry> {
  if (!funcs) {
    funcs = new Map();
    for (const [name, fn] of Object.entries(BUILTINS)) funcs.set(name, { fn, builtin: true });
    for (const set of [
      STRING_FUNCS,
      LIST_FUNCS,
      DICT_FUNCS,
      NUMERIC_FUNCS,
      DEFAULT_FUNCS,
      MISC_FUNCS,
      DATE_FUNCS,
      SEMVER_FUNCS,
    ]) {
      for (const [name, fn] of Object.entries(set)) funcs.set(name, { fn, builtin: false });
    }
  }
  return funcs;
}
