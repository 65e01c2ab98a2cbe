import { ApiError } from '../errors.js';
import type { Handler } from '../handlers/types.js';

const notYet = (): never => {
  throw new ApiError('unavailable', 'terminals are not served yet');
};

export const listComputerTerminals: Handler<'listComputerTerminals'> = async () => notYet();
export const createComputerTerminal: Handler<'createComputerTerminal'> = async () => notYet();
export const getComputerTerminal: Handler<'getComputerTerminal'> = async () => notYet();
export const updateComputerTerminal: Handler<'updateComputerTerminal'> = async () => notYet();
export const deleteComputerTerminal: Handler<'deleteComputerTerminal'> = async () => notYet();
export const streamComputerTerminalOutput: Handler<'streamComputerTerminalOutput'> = async () => notYet();
export const sendComputerTerminalInput: Handler<'sendComputerTerminalInput'> = async () => notYet();
export const getComputerTerminalScreen: Handler<'getComputerTerminalScreen'> = async () => notYet();

/** The handlers of a computer's terminals (`…/computers/{computer}/terminals`). */
export const terminalHandlers = {
  listComputerTerminals,
  createComputerTerminal,
  getComputerTerminal,
  updateComputerTerminal,
  deleteComputerTerminal,
  streamComputerTerminalOutput,
  sendComputerTerminalInput,
  getComputerTerminalScreen,
};
