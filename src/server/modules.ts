import { approvalsModule } from '../approvals/module.js';
import { callbacksModule } from '../callbacks/module.js';
import { deliveryModule } from '../delivery/module.js';
import { gateModule } from '../gate/module.js';
import { ingressModule } from '../ingress/module.js';
import { signalsModule } from '../signals/module.js';
import { notifyModule } from '../notify/module.js';
import { runtimesModule } from '../runtimes/module.js';
import { repliesModule } from '../replies/module.js';
import { tasksModule } from '../tasks/module.js';
import { coreModule } from './core-routes.js';
import type { Module } from '../kernel/module.js';

/**
 * Every module the gateway runs, in start order. A new module is one line here; nothing else in the
 * server knows what a module does.
 */
export function allModules(): Module[] {
  const modules: Module[] = [];
  modules.push(coreModule(() => modules));
  modules.push(deliveryModule());
  modules.push(approvalsModule());
  modules.push(callbacksModule());
  modules.push(repliesModule());
  modules.push(tasksModule());
  modules.push(gateModule());
  modules.push(ingressModule());
  modules.push(runtimesModule());
  const notify = notifyModule();
  modules.push(notify);
  modules.push(signalsModule({ reporter: () => notify.notifier() }));
  return modules;
}
