/**
 * Execution of text/template trees (Go 1.19 exec.go) with Option("missingkey=error"): walk,
 * pipelines, field and map access, function calls with Go's argument typing, and Go's error
 * texts and locations. Our caps (output bytes, steps, template nesting) stop runaway templates.
 */
import { CapError, GoError, TemplateError, UnsupportedError } from './errors.ts';
import { sprint, sprintf } from './fmt.ts';
import {
  type BranchNode,
  type ChainNode,
  type CommandNode,
  errorContext,
  type FieldNode,
  type IdentifierNode,
  type Node,
  type NumberNode,
  nodeString,
  type PipeNode,
  type TemplateNode,
  type VariableNode,
} from './nodes.ts';
import type { TreeSet } from './parser.ts';
import { indirect, isTrue, truth } from './reflect.ts';
import {
  assignableTo,
  BOOL,
  COMPLEX128,
  canBeNil,
  FLOAT64,
  type GoFunc,
  type GoType,
  INT,
  isComplexKind,
  isFloatKind,
  isIntKind,
  isUintKind,
  ptrTo,
  REFLECT_VALUE,
  STRING,
} from './types.ts';
import {
  concrete,
  elemValue,
  GoValue,
  mapIndex,
  type RV,
  sliceIndex,
  sortedKeys,
  zeroValue,
} from './value.ts';

export interface FuncEntry {
  fn: GoFunc;
  builtin: boolean;
}

export interface Limits {
  /** Output bytes. */
  maxOutputBytes: number;
  /** Nodes walked plus commands evaluated. */
  maxSteps: number;
  /** Nested {{template}} calls (Go allows 100000; a JS stack does not). */
  maxTemplateDepth: number;
}

const MISSING = new GoValue({ kind: 'struct', name: 'template.missingValType', fields: [] }, []);

class Break {}
class Continue {}
const BREAK = new Break();
const CONTINUE = new Continue();

const dp = (s: string) => s;
const q = (s: string) => JSON.stringify(s);

/** Sprintf("%v", value) for error texts (reflect.Value prints its content). */
const fv = (v: RV) => sprintf('%v', [v]);

interface Variable {
  name: string;
  value: RV;
}

export class Output {
  parts: string[] = [];
  bytes = 0;
  readonly limits: Limits;
  constructor(limits: Limits) {
    this.limits = limits;
  }
  write(s: string) {
    this.bytes += Buffer.byteLength(s, 'utf8');
    if (this.bytes > this.limits.maxOutputBytes) {
      throw new CapError(`output exceeds the cap of ${this.limits.maxOutputBytes} bytes`);
    }
    this.parts.push(s);
  }
}

export class State {
  node: Node | null = null;
  vars: Variable[];
  steps = { n: 0 };
  readonly tmplName: string;
  readonly trees: TreeSet;
  readonly funcs: Map<string, FuncEntry>;
  readonly out: Output;
  readonly depth: number;
  constructor(
    tmplName: string,
    trees: TreeSet,
    funcs: Map<string, FuncEntry>,
    out: Output,
    dot: RV,
    depth = 0,
  ) {
    this.tmplName = tmplName;
    this.trees = trees;
    this.funcs = funcs;
    this.out = out;
    this.depth = depth;
    this.vars = [{ name: '$', value: dot }];
  }

  step() {
    if (++this.steps.n > this.out.limits.maxSteps) {
      throw new CapError(`execution stopped after ${this.out.limits.maxSteps} steps (the step cap)`);
    }
  }

  errorf(msg: string): never {
    const name = this.tmplName;
    if (this.node === null) throw new TemplateError(`template: ${name}: ${msg}`, 'exec');
    const [location, context] = errorContext(this.node);
    throw new TemplateError(
      `template: ${location}: executing ${q(name)} at <${dp(context)}>: ${msg}`,
      'exec',
    );
  }

  /** A Go behaviour we refuse: the message, located like Go's errors. */
  refuse(msg: string): never {
    try {
      this.errorf(msg);
    } catch (e) {
      throw new TemplateError((e as Error).message, 'unsupported');
    }
  }

  at(n: Node) {
    this.node = n;
  }

  mark() {
    return this.vars.length;
  }
  pop(mark: number) {
    this.vars.length = mark;
  }

  setVar(name: string, value: RV) {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  varValue(name: string): RV {
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.errorf(`undefined variable: ${name}`);
  }

  walk(dot: RV, node: Node): void {
    this.step();
    this.at(node);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
      case 'comment':
        return;
      case 'if':
      case 'with':
        this.walkIfOrWith(node, dot);
        return;
      case 'list':
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case 'range':
        this.walkRange(dot, node);
        return;
      case 'template':
        this.walkTemplate(dot, node);
        return;
      case 'text':
        this.out.write(node.text);
        return;
      default:
        this.errorf(`unknown node: ${nodeString(node)}`);
    }
  }

  walkIfOrWith(node: BranchNode, dot: RV) {
    const mark = this.mark();
    try {
      const val = this.evalPipeline(dot, node.pipe);
      const [t, ok] = isTrue(val !== null && val.type.kind === 'interface' ? (val.v as RV) : val);
      if (!ok) this.errorf(`if/with can't use ${fv(val)}`);
      if (t) this.walk(node.type === 'with' ? val : dot, node.list);
      else if (node.elseList) this.walk(dot, node.elseList);
    } finally {
      this.pop(mark);
    }
  }

  walkRange(dot: RV, r: BranchNode) {
    this.at(r);
    const outer = this.mark();
    try {
      const [val] = indirect(this.evalPipeline(dot, r.pipe));
      const mark = this.mark();
      const one = (index: RV, elem: RV) => {
        if (r.pipe.decl.length > 0) this.vars[this.vars.length - 1]!.value = elem;
        if (r.pipe.decl.length > 1) this.vars[this.vars.length - 2]!.value = index;
        try {
          this.walk(elem, r.list);
        } catch (e) {
          if (e !== CONTINUE) throw e;
        } finally {
          this.pop(mark);
        }
      };
      let iterated = false;
      if (val === null) {
        // An invalid value (a nil map, say) ranges like an empty one.
      } else if (val.type.kind === 'slice' || val.type.kind === 'array') {
        const n = val.v === null ? 0 : (val.v as RV[]).length;
        iterated = n > 0;
        for (let i = 0; i < n; i++) one(new GoValue(INT, BigInt(i)), sliceIndex(val, i));
      } else if (val.type.kind === 'map') {
        const m = val.v as Map<string, RV> | null;
        if (m !== null && m.size > 0) {
          iterated = true;
          for (const k of sortedKeys(m))
            one(new GoValue(val.type.key!, k), elemValue(val.type.elem!, m.get(k)!));
        }
      } else {
        this.errorf(`range can't iterate over ${fv(val)}`);
      }
      if (!iterated && r.elseList) this.walk(dot, r.elseList);
    } catch (e) {
      if (e !== BREAK) throw e;
    } finally {
      this.pop(outer);
    }
  }

  walkTemplate(dot: RV, t: TemplateNode) {
    this.at(t);
    const tree = this.trees.get(t.name);
    if (tree === undefined || tree.root === null) this.errorf(`template ${q(t.name)} not defined`);
    if (this.depth >= this.out.limits.maxTemplateDepth) {
      throw new CapError(`exceeded maximum template depth (${this.out.limits.maxTemplateDepth})`);
    }
    const newDot = this.evalPipeline(dot, t.pipe);
    const s = new State(t.name, this.trees, this.funcs, this.out, newDot, this.depth + 1);
    s.steps = this.steps;
    s.walk(newDot, tree.root);
  }

  evalPipeline(dot: RV, pipe: PipeNode | null): RV {
    if (pipe === null) return null;
    this.at(pipe);
    let value: RV = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      if (value !== null && value.type.kind === 'interface') value = value.v as RV;
    }
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0]!, value);
      else this.vars.push({ name: v.ident[0]!, value });
    }
    return value;
  }

  notAFunction(args: Node[] | null, final: RV) {
    if ((args !== null && args.length > 1) || final !== MISSING) {
      this.errorf(`can't give argument to non-function ${nodeString(args![0]!)}`);
    }
  }

  evalCommand(dot: RV, cmd: CommandNode, final: RV): RV {
    this.step();
    const first = cmd.args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return new GoValue(BOOL, first.value);
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
        break;
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return new GoValue(STRING, first.text);
    }
    this.errorf(`can't evaluate command ${q(nodeString(first))}`);
  }

  idealConstant(c: NumberNode): RV {
    this.at(c);
    if (c.isComplex) return new GoValue(COMPLEX128, c.complex);
    const isHexInt = /^0[xX]/.test(c.text) && !/[pP]/.test(c.text);
    if (c.isFloat && !isHexInt && c.text[0] !== "'" && /[.eEpP]/.test(c.text))
      return new GoValue(FLOAT64, c.float64);
    if (c.isInt) return new GoValue(INT, c.int64);
    if (c.isUint) this.errorf(`${c.text} overflows int`);
    return null;
  }

  evalFieldNode(dot: RV, field: FieldNode, args: Node[] | null, final: RV): RV {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  evalChainNode(dot: RV, chain: ChainNode, args: Node[] | null, final: RV): RV {
    this.at(chain);
    if (chain.field.length === 0) this.errorf('internal error: no fields in evalChainNode');
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, chain, chain.field, args, final);
  }

  evalVariableNode(dot: RV, v: VariableNode, args: Node[] | null, final: RV): RV {
    this.at(v);
    const value = this.varValue(v.ident[0]!);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, v, v.ident.slice(1), args, final);
  }

  evalFieldChain(dot: RV, receiver: RV, node: Node, ident: string[], args: Node[] | null, final: RV): RV {
    const n = ident.length;
    for (let i = 0; i < n - 1; i++) receiver = this.evalField(dot, ident[i]!, node, null, MISSING, receiver);
    return this.evalField(dot, ident[n - 1]!, node, args, final, receiver);
  }

  evalFunction(dot: RV, node: IdentifierNode, cmd: Node, args: Node[] | null, final: RV): RV {
    this.at(node);
    const f = this.funcs.get(node.ident);
    if (!f) this.errorf(`${q(node.ident)} is not a defined function`);
    return this.evalCall(dot, f.fn, f.builtin, cmd, node.ident, args, final);
  }

  evalField(dot: RV, fieldName: string, node: Node, args: Node[] | null, final: RV, receiver: RV): RV {
    if (receiver === null) this.errorf(`nil data; no entry for key ${q(fieldName)}`);
    const typ = receiver.type;
    const [rcv, isNil] = indirect(receiver);
    const r = rcv!;
    if (r.type.kind === 'interface' && isNil) this.errorf(`nil pointer evaluating ${typ.name}.${fieldName}`);
    // Reached through a pointer, the value is addressable: the pointer's method set applies.
    const addressable = !isNil && r !== concrete(receiver) && r.type.kind === 'struct';
    const methods = addressable ? ptrTo(r.type).methods : r.type.methods;
    const method = methods?.get(fieldName) ?? (isNil ? undefined : promotedMethod(r, fieldName));
    if (method) return this.evalCall(dot, method(r), false, node, fieldName, args, final);
    const hasArgs = (args !== null && args.length > 1) || final !== MISSING;
    switch (r.type.kind) {
      case 'struct': {
        const found = fieldByName(r, fieldName);
        if (found) {
          if (!/^\p{Lu}/u.test(fieldName)) {
            this.errorf(`${fieldName} is an unexported field of struct type ${typ.name}`);
          }
          if (hasArgs) this.errorf(`${fieldName} has arguments but cannot be invoked as function`);
          return found.value;
        }
        break;
      }
      case 'map': {
        if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
        const result = mapIndex(r, fieldName);
        if (result === undefined) this.errorf(`map has no entry for key ${q(fieldName)}`);
        return result;
      }
      case 'ptr': {
        const et = r.type.elem!;
        if (et.kind === 'struct' && !(et.fields ?? []).some((f) => f.name === fieldName)) break;
        if (isNil) this.errorf(`nil pointer evaluating ${typ.name}.${fieldName}`);
        break;
      }
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typ.name}`);
  }

  evalCall(
    dot: RV,
    fun: GoFunc,
    isBuiltin: boolean,
    node: Node,
    name: string,
    argNodes: Node[] | null,
    final: RV,
  ): RV {
    const args = argNodes === null ? [] : argNodes.slice(1);
    const sig = fun.sig;
    const numParams = sig.params.length;
    const numIn = args.length + (final !== MISSING ? 1 : 0);
    let numFixed = args.length;
    if (sig.variadic) {
      numFixed = numParams - 1;
      if (numIn < numFixed) {
        this.errorf(`wrong number of args for ${name}: want at least ${numParams - 1} got ${args.length}`);
      }
    } else if (numIn !== numParams) {
      this.errorf(`wrong number of args for ${name}: want ${numParams} got ${numIn}`);
    }
    if (isBuiltin && (name === 'and' || name === 'or')) {
      let v: RV = null;
      for (const arg of args) {
        v = this.evalArg(dot, REFLECT_VALUE, arg);
        if (truth(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validateType(final, REFLECT_VALUE);
      return v;
    }
    const argv: RV[] = [];
    let i = 0;
    for (; i < numFixed && i < args.length; i++) argv.push(this.evalArg(dot, sig.params[i]!, args[i]!));
    if (sig.variadic) {
      const argType = sig.params[numParams - 1]!.elem!;
      for (; i < args.length; i++) argv.push(this.evalArg(dot, argType, args[i]!));
    }
    if (final !== MISSING) {
      let t = sig.params[numParams - 1]!;
      if (sig.variadic) t = numIn - 1 < numFixed ? sig.params[numIn - 1]! : t.elem!;
      argv.push(this.validateType(final, t));
    }
    // Functions see interface {} arguments as their dynamic values.
    const callArgs = argv.map((a, k) => {
      const pt = k < numParams - (sig.variadic ? 1 : 0) ? sig.params[k]! : sig.params[numParams - 1]!.elem!;
      return pt.kind === 'interface' && a !== null && a.type.kind === 'interface' ? (a.v as RV) : a;
    });
    let result: RV;
    try {
      result = fun.call(callArgs as GoValue[]);
    } catch (e) {
      if (e instanceof GoError) {
        this.at(node);
        this.errorf(`error calling ${name}: ${e.message}`);
      }
      if (e instanceof UnsupportedError) {
        this.at(node);
        this.refuse(e.message);
      }
      throw e;
    }
    if (sig.result.kind === 'interface' && (result === null || result.type.kind !== 'interface')) {
      return new GoValue(sig.result, result);
    }
    return result;
  }

  validateType(value: RV, typ: GoType | null): RV {
    if (value === null) {
      if (typ === null) return null;
      if (canBeNil(typ)) return typ === REFLECT_VALUE ? null : zeroValue(typ);
      this.errorf(`invalid value; expected ${typ.name}`);
    }
    if (typ === REFLECT_VALUE) return value;
    if (typ !== null && !assignableTo(value.type, typ)) {
      if (value.type.kind === 'interface' && value.v !== null) {
        value = value.v as GoValue;
        if (assignableTo(value.type, typ)) return value;
      }
      if (value.type.kind === 'ptr' && assignableTo(value.type.elem!, typ)) {
        if (value.v === null) this.errorf(`dereference of nil pointer of type ${typ.name}`);
        return value.v as GoValue;
      }
      this.errorf(`wrong type for value; expected ${typ.name}; got ${value.type.name}`);
    }
    return value;
  }

  evalArg(dot: RV, typ: GoType | null, n: Node): RV {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ !== null && canBeNil(typ)) return typ === REFLECT_VALUE ? null : zeroValue(typ);
        this.errorf(`cannot assign nil to ${typ?.name}`);
        break;
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, null, MISSING), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), typ);
    }
    const k = typ!.kind;
    if (k === 'bool') {
      if (n.type === 'bool') return new GoValue(typ!, n.value);
      this.errorf(`expected bool; found ${nodeString(n)}`);
    }
    if (isComplexKind(k)) {
      if (n.type === 'number' && n.isComplex) return new GoValue(typ!, n.complex);
      this.errorf(`expected complex; found ${nodeString(n)}`);
    }
    if (isFloatKind(k)) {
      if (n.type === 'number' && n.isFloat) return new GoValue(typ!, n.float64);
      this.errorf(`expected float; found ${nodeString(n)}`);
    }
    if (isIntKind(k)) {
      if (n.type === 'number' && n.isInt) return new GoValue(typ!, n.int64);
      this.errorf(`expected integer; found ${nodeString(n)}`);
    }
    if (k === 'interface' || typ === REFLECT_VALUE) return this.evalEmptyInterface(dot, n);
    if (k === 'string') {
      if (n.type === 'string') return new GoValue(typ!, n.text);
      this.errorf(`expected string; found ${nodeString(n)}`);
    }
    if (isUintKind(k)) {
      if (n.type === 'number' && n.isUint) return new GoValue(typ!, n.uint64);
      this.errorf(`expected unsigned integer; found ${nodeString(n)}`);
    }
    this.errorf(`can't handle ${nodeString(n)} for arg of type ${typ!.name}`);
  }

  evalEmptyInterface(_dot: RV, n: Node): RV {
    this.at(n);
    switch (n.type) {
      case 'bool':
        return new GoValue(BOOL, n.value);
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return new GoValue(STRING, n.text);
    }
    this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
  }

  printValue(n: Node, v: RV) {
    this.at(n);
    if (v !== null && v.type.kind === 'ptr') v = indirect(v)[0];
    if (v === null) {
      this.out.write('<no value>');
      return;
    }
    if (v.type.kind === 'func') this.errorf(`can't print ${nodeString(n)} of type ${v.type.name}`);
    try {
      this.out.write(sprint([v]));
    } catch (e) {
      if (e instanceof UnsupportedError) this.refuse(e.message);
      throw e;
    }
  }
}

/** reflect's FieldByName with embedded-field promotion (breadth first, as Go resolves it). */
function fieldByName(v: GoValue, name: string): { value: RV } | undefined {
  let level: GoValue[] = [v];
  while (level.length > 0) {
    const next: GoValue[] = [];
    for (const s of level) {
      const fields = s.type.fields ?? [];
      const vals = s.v as RV[];
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i]!;
        if (f.name === name)
          return { value: f.type.kind === 'interface' ? new GoValue(f.type, vals[i]!) : vals[i]! };
      }
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i]!;
        if (!f.embedded) continue;
        const ev = vals[i]!;
        if (ev === null) continue;
        if (ev.type.kind === 'struct') next.push(ev);
        else if (ev.type.kind === 'ptr' && ev.v !== null) next.push(ev.v as GoValue);
      }
    }
    level = next;
  }
  return undefined;
}

/** A method promoted from an embedded field (ObjectMeta's GetName on a NodeClaim, say). */
function promotedMethod(v: GoValue, name: string): ((self: GoValue) => GoFunc) | undefined {
  if (v.type.kind !== 'struct') return undefined;
  const fields = v.type.fields ?? [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (!f.embedded) continue;
    let ev: RV = (v.v as RV[])[i] ?? null;
    if (ev !== null && ev.type.kind === 'ptr') ev = ev.v as RV;
    if (ev === null) continue;
    const m = ev.type.methods?.get(name) ?? promotedMethod(ev as GoValue, name);
    if (m) {
      const inner = ev;
      return () => m(inner);
    }
  }
  return undefined;
}

export { MISSING };
