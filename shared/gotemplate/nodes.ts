/**
 * Parse tree nodes of text/template (parse/node.go) and their String() forms, which Go's
 * execution errors quote as the context: `executing "t" at <.Values.Foo>`.
 */
import { quote } from './strconv.ts';

/** What a node needs of its tree for error locations. */
export interface TreeRef {
  name: string;
  parseName: string;
  text: string;
}

interface Base {
  pos: number;
  tree: TreeRef;
}

export interface ListNode extends Base {
  type: 'list';
  nodes: Node[];
}
export interface TextNode extends Base {
  type: 'text';
  text: string;
}
export interface CommentNode extends Base {
  type: 'comment';
  text: string;
}
export interface PipeNode extends Base {
  type: 'pipe';
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface ActionNode extends Base {
  type: 'action';
  line: number;
  pipe: PipeNode;
}
export interface CommandNode extends Base {
  type: 'command';
  args: Node[];
}
export interface IdentifierNode extends Base {
  type: 'identifier';
  ident: string;
}
export interface VariableNode extends Base {
  type: 'variable';
  ident: string[];
}
export interface DotNode extends Base {
  type: 'dot';
}
export interface NilNode extends Base {
  type: 'nil';
}
export interface FieldNode extends Base {
  type: 'field';
  ident: string[];
}
export interface ChainNode extends Base {
  type: 'chain';
  node: Node;
  field: string[];
}
export interface BoolNode extends Base {
  type: 'bool';
  value: boolean;
}
export interface NumberNode extends Base {
  type: 'number';
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int64: bigint;
  uint64: bigint;
  float64: number;
  complex: { re: number; im: number };
  text: string;
}
export interface StringNode extends Base {
  type: 'string';
  quoted: string;
  text: string;
}
export interface EndNode extends Base {
  type: 'end';
}
export interface ElseNode extends Base {
  type: 'else';
  line: number;
}
export interface BranchNode extends Base {
  type: 'if' | 'range' | 'with';
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
export interface TemplateNode extends Base {
  type: 'template';
  line: number;
  name: string;
  pipe: PipeNode | null;
}
export interface BreakNode extends Base {
  type: 'break';
  line: number;
}
export interface ContinueNode extends Base {
  type: 'continue';
  line: number;
}

export type Node =
  | ListNode
  | TextNode
  | CommentNode
  | PipeNode
  | ActionNode
  | CommandNode
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | EndNode
  | ElseNode
  | BranchNode
  | TemplateNode
  | BreakNode
  | ContinueNode;

/** Node.String() as Go writes it. */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'text':
      return n.text;
    case 'comment':
      return `{{${n.text}}}`;
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) s = `${n.decl.map(nodeString).join(', ')} := `;
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'identifier':
      return n.ident;
    case 'variable':
      return n.ident.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return n.ident.map((i) => `.${i}`).join('');
    case 'chain': {
      const head = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return head + n.field.map((f) => `.${f}`).join('');
    }
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
    case 'if':
    case 'range':
    case 'with': {
      let s = `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}`;
      if (n.elseList) s += `{{else}}${nodeString(n.elseList)}`;
      return `${s}{{end}}`;
    }
    case 'template':
      return `{{template ${quote(n.name)}${n.pipe ? ` ${nodeString(n.pipe)}` : ''}}}`;
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
  }
}

/** Tree.ErrorContext: "name:line:col" (col in bytes from the line start, as Go counts) and the node text. */
export function errorContext(n: Node): [string, string] {
  const text = n.tree.text.slice(0, n.pos);
  const nl = text.lastIndexOf('\n');
  const col = Buffer.byteLength(nl === -1 ? text : text.slice(nl + 1), 'utf8');
  let line = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return [`${n.tree.parseName}:${line}:${col}`, nodeString(n)];
}
