export {
  type DeployedTrigger,
  DeployedTriggerSchema,
  type DeployResult,
  DeployResultSchema,
  type ExecStep,
  ExecStepSchema,
  type PlanNote,
  PlanNoteSchema,
  type PlanStep,
  PlanStepSchema,
  resultLines,
  webhookPath,
} from "../wire/deploy-result.ts";
export { type AppliedPlan, applyPlan, createPlanApplier, type PlanApplier } from "./applier.ts";
export { type DeployContext, deploy } from "./deploy.ts";
export { type DeployInput, DeployInputSchema, MAX_BUILD_BYTES } from "./input.ts";
