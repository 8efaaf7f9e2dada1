/** `metal3fn relay`: the relay's own command (functions/relay/command.ts, also the relay bundle's entry). */
export { run } from '../../functions/relay/command.ts';
