/**
 * The parser of text/template (Go 1.19 parse/parse.go), with its three-token lookahead, so parse
 * errors carry Go's text and line: `template: t:3: function "x" not defined`.
 */
import { type Item, itemString, Lexer, T } from './lexer.ts';
import type {
  BranchNode,
  ChainNode,
  CommandNode,
  ListNode,
  Node,
  PipeNode,
  TemplateNode,
  TreeRef,
  VariableNode,
} from './nodes.ts';
import { nodeString } from './nodes.ts';
import { parseNumber } from './numbers.ts';
import { UnsupportedByteError, unquote } from './strconv.ts';

/** A parse error, message as Go's: `template: NAME:LINE: …`. */
export class ParseError extends Error {}

export interface Tree extends TreeRef {
  root: ListNode | null;
}

export type TreeSet = Map<string, Tree>;

/** Only unicode.IsSpace characters (bytes.TrimSpace leaves nothing). */
const GO_SPACE_ONLY = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

function isEmptyTree(n: Node | null): boolean {
  if (n === null) return true;
  switch (n.type) {
    case 'comment':
      return true;
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return GO_SPACE_ONLY.test(n.text);
    default:
      return false;
  }
}

class Parser {
  tree: Tree;
  token: Item[] = [];
  peekCount = 0;
  vars: string[] = ['$'];
  actionLine = 0;
  rangeDepth = 0;

  readonly lex: Lexer;
  readonly treeSet: TreeSet;
  readonly hasFunction: (name: string) => boolean;
  constructor(
    name: string,
    parseName: string,
    text: string,
    lex: Lexer,
    treeSet: TreeSet,
    hasFunction: (name: string) => boolean,
  ) {
    this.tree = { name, parseName, text, root: null };
    this.lex = lex;
    this.treeSet = treeSet;
    this.hasFunction = hasFunction;
  }

  errorf(msg: string): never {
    this.tree.root = null;
    throw new ParseError(`template: ${this.tree.parseName}:${this.token[0]?.line ?? 0}: ${msg}`);
  }

  next(): Item {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.lex.nextItem();
    return this.token[this.peekCount]!;
  }
  backup() {
    this.peekCount++;
  }
  backup2(t1: Item) {
    this.token[1] = t1;
    this.peekCount = 2;
  }
  backup3(t2: Item, t1: Item) {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }
  peek(): Item {
    if (this.peekCount > 0) return this.token[this.peekCount - 1]!;
    this.peekCount = 1;
    this.token[0] = this.lex.nextItem();
    return this.token[0];
  }
  nextNonSpace(): Item {
    for (;;) {
      const t = this.next();
      if (t.typ !== T.Space) return t;
    }
  }
  peekNonSpace(): Item {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  expect(expected: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== expected) this.unexpected(t, context);
    return t;
  }

  expectOneOf(a: T, b: T, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== a && t.typ !== b) this.unexpected(t, context);
    return t;
  }

  unexpected(token: Item, context: string): never {
    if (token.typ === T.Error) {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.tree.parseName}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(token)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`);
  }

  unquote(val: string): string {
    try {
      return unquote(val);
    } catch (e) {
      if (e instanceof UnsupportedByteError) this.errorf(e.message);
      this.errorf('invalid syntax');
    }
  }

  add() {
    const existing = this.treeSet.get(this.tree.name);
    if (existing === undefined || isEmptyTree(existing.root)) {
      this.treeSet.set(this.tree.name, this.tree);
      return;
    }
    if (!isEmptyTree(this.tree.root)) {
      this.errorf(`template: multiple definition of template ${JSON.stringify(this.tree.name)}`);
    }
  }

  /** A sub-parser on the same lexer with its own lookahead, as Go's startParse (define, block). */
  child(name: string): Parser {
    return new Parser(name, this.tree.parseName, this.tree.text, this.lex, this.treeSet, this.hasFunction);
  }

  newList(pos: number): ListNode {
    return { type: 'list', pos, tree: this.tree, nodes: [] };
  }

  parse() {
    this.tree.root = this.newList(this.peek().pos);
    while (this.peek().typ !== T.EOF) {
      if (this.peek().typ === T.LeftDelim) {
        const delim = this.next();
        if (this.nextNonSpace().typ === T.Define) {
          const def = this.child('definition');
          def.parseDefinition();
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      this.tree.root.nodes.push(n);
    }
  }

  parseDefinition() {
    const context = 'define clause';
    const name = this.expectOneOf(T.String, T.RawString, context);
    this.tree.name = this.unquote(name.val);
    this.expect(T.RightDelim, context);
    const [list, end] = this.itemList();
    this.tree.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  itemList(): [ListNode, Node] {
    const list = this.newList(this.peekNonSpace().pos);
    while (this.peekNonSpace().typ !== T.EOF) {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Text:
        return { type: 'text', pos: token.pos, tree: this.tree, text: token.val };
      case T.LeftDelim: {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      case T.Comment:
        return { type: 'comment', pos: token.pos, tree: this.tree, text: token.val };
      default:
        this.unexpected(token, 'input');
    }
  }

  action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Block:
        return this.blockControl();
      case T.Break:
        return this.breakControl(token.pos, token.line, 'break');
      case T.Continue:
        return this.breakControl(token.pos, token.line, 'continue');
      case T.Else:
        return this.elseControl();
      case T.End:
        return { type: 'end', pos: this.expect(T.RightDelim, 'end').pos, tree: this.tree };
      case T.If:
        return this.parseControl(true, 'if');
      case T.Range:
        return this.parseControl(false, 'range');
      case T.Template:
        return this.templateControl();
      case T.With:
        return this.parseControl(false, 'with');
    }
    this.backup();
    const t = this.peek();
    return {
      type: 'action',
      pos: t.pos,
      line: t.line,
      tree: this.tree,
      pipe: this.pipeline('command', T.RightDelim),
    };
  }

  breakControl(pos: number, line: number, kind: 'break' | 'continue'): Node {
    const token = this.nextNonSpace();
    if (token.typ !== T.RightDelim) this.unexpected(token, `{{${kind}}}`);
    if (this.rangeDepth === 0) this.errorf(`{{${kind}}} outside {{range}}`);
    return { type: kind, pos, line, tree: this.tree };
  }

  pipeline(context: string, end: T): PipeNode {
    const token = this.peekNonSpace();
    const pipe: PipeNode = {
      type: 'pipe',
      pos: token.pos,
      line: token.line,
      tree: this.tree,
      isAssign: false,
      decl: [],
      cmds: [],
    };
    for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== T.Variable) break;
      this.next();
      const tokenAfterVariable = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === T.Assign || next.typ === T.Declare) {
        pipe.isAssign = next.typ === T.Assign;
        this.nextNonSpace();
        pipe.decl.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
      } else if (next.typ === T.Char && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(this.newVariable(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === T.Variable || p === T.RightDelim || p === T.RightParen) continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (tokenAfterVariable.typ === T.Space) {
        this.backup3(v, tokenAfterVariable);
      } else {
        this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      switch (token.typ) {
        case end:
          this.checkPipeline(pipe, context);
          return pipe;
        case T.Bool:
        case T.CharConstant:
        case T.Complex:
        case T.Dot:
        case T.Field:
        case T.Identifier:
        case T.Number:
        case T.Nil:
        case T.RawString:
        case T.String:
        case T.Variable:
        case T.LeftParen:
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string) {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]!.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  parseControl(allowElseIf: boolean, context: 'if' | 'range' | 'with'): BranchNode {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(context, T.RightDelim);
      if (context === 'range') this.rangeDepth++;
      let [list, next] = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        if (allowElseIf && this.peek().typ === T.If) {
          this.next();
          elseList = this.newList(next.pos);
          elseList.nodes.push(this.parseControl(true, 'if'));
        } else {
          [elseList, next] = this.itemList();
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { type: context, pos: pipe.pos, line: pipe.line, tree: this.tree, pipe, list, elseList };
    } finally {
      this.vars.length = mark;
    }
  }

  elseControl(): Node {
    const peek = this.peekNonSpace();
    if (peek.typ === T.If) return { type: 'else', pos: peek.pos, line: peek.line, tree: this.tree };
    const token = this.expect(T.RightDelim, 'else');
    return { type: 'else', pos: token.pos, line: token.line, tree: this.tree };
  }

  blockControl(): Node {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    const pipe = this.pipeline(context, T.RightDelim);
    const block = this.child(name);
    const [list, end] = block.itemList();
    block.tree.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    block.add();
    return this.newTemplate(token, name, pipe);
  }

  templateControl(): Node {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.parseTemplateName(token, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== T.RightDelim) {
      this.backup();
      pipe = this.pipeline(context, T.RightDelim);
    }
    return this.newTemplate(token, name, pipe);
  }

  newTemplate(token: Item, name: string, pipe: PipeNode | null): TemplateNode {
    return { type: 'template', pos: token.pos, line: token.line, tree: this.tree, name, pipe };
  }

  parseTemplateName(token: Item, context: string): string {
    if (token.typ === T.String || token.typ === T.RawString) return this.unquote(token.val);
    this.unexpected(token, context);
  }

  command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, tree: this.tree, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand !== null) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === T.Space) continue;
      if (token.typ === T.RightDelim || token.typ === T.RightParen) this.backup();
      else if (token.typ !== T.Pipe) this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  operand(): Node | null {
    let node = this.term();
    if (node === null) return null;
    if (this.peek().typ === T.Field) {
      const chain: ChainNode = { type: 'chain', pos: this.peek().pos, tree: this.tree, node, field: [] };
      while (this.peek().typ === T.Field) chain.field.push(this.next().val.slice(1));
      switch (node.type) {
        case 'field':
          node = {
            type: 'field',
            pos: chain.pos,
            tree: this.tree,
            ident: nodeString(chain).slice(1).split('.'),
          };
          break;
        case 'variable':
          node = this.newVariable(chain.pos, nodeString(chain));
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${JSON.stringify(nodeString(node))}`);
          break;
        default:
          node = chain;
      }
    }
    return node;
  }

  term(): Node | null {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case T.Identifier:
        if (!this.hasFunction(token.val)) this.errorf(`function ${JSON.stringify(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, tree: this.tree, ident: token.val };
      case T.Dot:
        return { type: 'dot', pos: token.pos, tree: this.tree };
      case T.Nil:
        return { type: 'nil', pos: token.pos, tree: this.tree };
      case T.Variable:
        return this.useVar(token.pos, token.val);
      case T.Field:
        return { type: 'field', pos: token.pos, tree: this.tree, ident: token.val.slice(1).split('.') };
      case T.Bool:
        return { type: 'bool', pos: token.pos, tree: this.tree, value: token.val === 'true' };
      case T.CharConstant:
      case T.Complex:
      case T.Number:
        return this.numberNode(token);
      case T.LeftParen:
        return this.pipeline('parenthesized pipeline', T.RightParen);
      case T.String:
      case T.RawString:
        return {
          type: 'string',
          pos: token.pos,
          tree: this.tree,
          quoted: token.val,
          text: this.unquote(token.val),
        };
    }
    this.backup();
    return null;
  }

  numberNode(token: Item): Node {
    const kind = token.typ === T.CharConstant ? 'char' : token.typ === T.Complex ? 'complex' : 'number';
    try {
      return { type: 'number', pos: token.pos, tree: this.tree, ...parseNumber(token.val, kind) };
    } catch (e) {
      this.errorf((e as Error).message);
    }
  }

  newVariable(pos: number, ident: string): VariableNode {
    return { type: 'variable', pos, tree: this.tree, ident: ident.split('.') };
  }

  useVar(pos: number, name: string): Node {
    const v = this.newVariable(pos, name);
    if (!this.vars.includes(v.ident[0]!)) this.errorf(`undefined variable ${JSON.stringify(v.ident[0])}`);
    return v;
  }
}

/**
 * parse.Parse: the tree set of the text (the top template under `name`, plus every define and
 * block), or throws ParseError.
 */
export function parseTemplates(name: string, text: string, hasFunction: (n: string) => boolean): TreeSet {
  const treeSet: TreeSet = new Map();
  const p = new Parser(name, name, text, new Lexer(text), treeSet, hasFunction);
  p.parse();
  p.add();
  return treeSet;
}
