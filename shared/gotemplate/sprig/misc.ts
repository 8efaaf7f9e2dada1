/** sprig v3.2.3 path functions (Go's path and filepath on Linux) and the random ones. */
import { goFunc } from '../builtins.ts';
import { str } from '../reflect.ts';
import { BOOL, type GoFunc, INT, STRING } from '../types.ts';
import { GoValue, goString } from '../value.ts';
import { crypto } from './crypto.ts';

/** path.Clean (Go's lexical processing). */
export function clean(p: string): string {
  if (p === '') return '.';
  const rooted = p[0] === '/';
  const n = p.length;
  const out: string[] = [];
  let r = 0;
  let dotdot = 0;
  if (rooted) {
    out.push('/');
    r = 1;
    dotdot = 1;
  }
  let w = out.join('');
  while (r < n) {
    if (p[r] === '/') r++;
    else if (p[r] === '.' && (r + 1 === n || p[r + 1] === '/')) r++;
    else if (p[r] === '.' && p[r + 1] === '.' && (r + 2 === n || p[r + 2] === '/')) {
      r += 2;
      if (w.length > dotdot) {
        let k = w.length - 1;
        while (k > dotdot && w[k] !== '/') k--;
        w = w.slice(0, k);
      } else if (!rooted) {
        if (w.length > 0) w += '/';
        w += '..';
        dotdot = w.length;
      }
    } else {
      if ((rooted && w.length !== 1) || (!rooted && w.length !== 0)) w += '/';
      for (; r < n && p[r] !== '/'; r++) w += p[r];
    }
  }
  return w === '' ? '.' : w;
}

export function base(p: string): string {
  if (p === '') return '.';
  while (p.length > 0 && p.endsWith('/')) p = p.slice(0, -1);
  const i = p.lastIndexOf('/');
  if (i >= 0) p = p.slice(i + 1);
  return p === '' ? '/' : p;
}

export function dir(p: string): string {
  const i = p.lastIndexOf('/');
  return clean(p.slice(0, i + 1));
}

export function ext(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

const S = STRING;
const f1 = (fn: (a: string) => string) => goFunc([S], S, ([a]) => goString(fn(str(a))));
const isAbs = goFunc([S], BOOL, ([a]) => new GoValue(BOOL, str(a).startsWith('/')));

function randomFrom(alphabet: string, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += alphabet[crypto().randomInt(alphabet.length)];
  return out;
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const NUM = '0123456789';
let ASCII = '';
for (let c = 32; c <= 126; c++) ASCII += String.fromCharCode(c);

const rand = (alphabet: string) =>
  goFunc([INT], S, ([n]) => goString(randomFrom(alphabet, Math.max(0, Math.min(Number(n.v), 1 << 20)))));

export const MISC_FUNCS: Record<string, GoFunc> = {
  base: f1(base),
  dir: f1(dir),
  clean: f1(clean),
  ext: f1(ext),
  isAbs,
  osBase: f1(base),
  osDir: f1(dir),
  osClean: f1(clean),
  osExt: f1(ext),
  osIsAbs: isAbs,
  uuidv4: goFunc([], S, () => goString(crypto().randomUUID())),
  randAlphaNum: rand(ALPHA + NUM),
  randAlpha: rand(ALPHA),
  randAscii: rand(ASCII),
  randNumeric: rand(NUM),
  randBytes: goFunc(
    [INT],
    S,
    ([n]) =>
      goString(
        crypto()
          .randomBytes(Math.max(0, Number(n.v)))
          .toString('base64'),
      ),
    {
      returnsError: true,
    },
  ),
  shuffle: f1((a) => {
    const cps = [...a];
    for (let i = cps.length - 1; i > 0; i--) {
      const j = crypto().randomInt(i + 1);
      [cps[i], cps[j]] = [cps[j]!, cps[i]!];
    }
    return cps.join('');
  }),
};
