/*
 * sample.c — the deterministic sample trace (see sample.h for the tables).
 *
 * Shaped like an Android phone running Chrome: 12 processes, 64 threads,
 * each thread one slice track with thread-appropriate names (UI threads do
 * Choreographer#doFrame → traversal → measure/layout/draw, RenderThreads
 * DrawFrame → syncFrameState …, binder threads binder reply → AIDL::…,
 * Chrome threads ThreadControllerImpl::RunTask → V8/Blink work), and 8 CPUs
 * with scheduling and frequency data over the same time span.
 *
 * Slices are generated root by root: the thread whose timeline is furthest
 * behind gets the next root, whose subtree is generated depth first (so ids
 * are parent-first) by splitting the parent's interval among its children
 * with gaps. Most subtrees are shallow; a few percent are deep call chains
 * (down to depth 30), as binder/JS recursion gives in real traces.
 *
 * Randomness is xoshiro256** seeded by splitmix64 (never libc rand()), so
 * the output depends only on the seed — and on libm's log/pow, which shape
 * a few durations and agree across the usual C libraries.
 */
#include <math.h>
#include <stdio.h>

#include "sample.h"

/* ---- PRNG ------------------------------------------------------------------ */

typedef struct rng {
  uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in [0, n) (Lemire's multiply-shift; the tiny bias is harmless). */
static inline uint64_t rng_below(rng *r, uint64_t n) {
  return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Log-uniform in [lo, hi]: durations spread over orders of magnitude. */
static int64_t rng_loguniform(rng *r, double lo, double hi) {
  return (int64_t)(lo * pow(hi / lo, rng_unit(r)));
}

/* ---- vocabulary ------------------------------------------------------------ */

enum { L_UI_ROOT, L_UI_MID, L_AND_LEAF, L_RT_ROOT, L_RT_MID, L_RT_LEAF, L_BINDER_ROOT,
       L_AIDL, L_CR_ROOT, L_CR_MID, L_CR_LEAF, L_IO_ROOT, L_IO_MID, L_WK_ROOT, L_WK_MID,
       L_SF_ROOT, L_SF_MID, L_SF_LEAF, L_GC_ROOT, L_GC_MID, L_COUNT };

#define VMAX 80
typedef struct vlist {
  const char *category;
  const char *names[VMAX];
} vlist;

/* Earlier names are picked more often (see pick_name), as in real traces
 * where a few names dominate. */
static const vlist vocab[L_COUNT] = {
  [L_UI_ROOT] = {"view", {
    "Choreographer#doFrame", "Looper.dispatch: android.view.Choreographer$FrameHandler",
    "deliverInputEvent", "handleMessage", "traversal",
    "Looper.dispatch: android.app.ActivityThread$H", "Looper.dispatch: android.os.Handler",
    "RV Scroll", "activityResume", "activityStart", "activityPause", "bindApplication",
    "performCreate:com.google.android.apps.maps.MapsActivity", "ReportFullyDrawn",
    "inputEvent", "animator:translationY", "animator:alpha", "ViewRootImpl#performTraversals",
    "onMessageReceived", "launching: com.google.android.apps.maps", "sendMessage",
    "AccessibilityInteractionController", "Looper.dispatch: android.view.ViewRootImpl$ViewRootHandler"}},
  [L_UI_MID] = {"view", {
    "traversal", "draw", "measure", "layout", "Record View#draw()", "input", "animation",
    "RV OnBindView", "RV CreateView", "inflate", "onMeasure", "onLayout", "onDraw",
    "RV OnLayout", "RV Prefetch", "setContentView", "ResourcesImpl#loadDrawable",
    "ResourcesImpl#loadXmlResourceParser", "obtainView", "setupListItem", "AssetManager::OpenXml",
    "postAndWait", "Choreographer#scheduleVsyncLocked", "notifyFramePending",
    "updateDisplayListIfDirty", "LoadApkAssets", "OpenDexFilesFromOat", "binder transaction",
    "binder transaction async", "Contending for pthread mutex", "ViewRootImpl#relayoutWindow",
    "TextView#onMeasure", "StaticLayout#generate", "ImageView#setImageDrawable",
    "Glide#load", "JSON parse", "SQLiteDatabase#query", "SharedPreferencesImpl#loadFromDisk",
    "Theme#obtainStyledAttributes", "ConstraintLayout#onMeasure", "LinearLayout#onLayout",
    "FrameLayout#onMeasure", "RecyclerView#dispatchLayoutStep2", "Fragment#onCreateView",
    "LayoutInflater#createView", "View#invalidate", "ViewGroup#dispatchDraw",
    "handleAppVisibility", "performResume", "performStart"}},
  [L_AND_LEAF] = {"dalvik", {
    "dequeueBuffer", "Lock contention on thread list lock (owner tid: 1455)",
    "monitor contention with owner main (1453)", "Open dex file /data/app/base.apk",
    "VerifyClass com.google.android.apps.maps.MapsActivity", "GC: Wait For Completion Alloc",
    "JIT compiling void android.view.View.draw(android.graphics.Canvas)",
    "Allocating", "page fault", "decodeBitmap", "Font::resolve", "HarfBuzz shaping",
    "Minikin::Layout", "ScopedJniEnv", "art::Thread::SuspendAll", "SuspendThreadByThreadId",
    "AssetManager::GetBag", "ResTable::getResource", "sqlite3_step", "fsync", "read", "write",
    "mmap", "binder reply", "Fence wait", "waitForever", "queueBuffer",
    "Lock contention on Class loader classes", "Lock contention on Jit code cache lock",
    "Lock contention on a monitor lock (owner tid: 1453)", "Lock contention on mutator lock",
    "Lock contention on thread suspend count lock", "Lock contention on ClassLinker classes lock",
    "Lock contention on DexCache lock", "Lock contention on JNI global reference table lock",
    "Lock contention on InternTable lock", "Lock contention on reference queue lock",
    "Lock contention on a monitor lock (owner tid: 2011)",
    "Lock contention on a monitor lock (owner tid: 2380)",
    "Lock contention on a monitor lock (owner tid: 9120)", "Thread birth",
    "Load reflection", "ClassLinker::DefineClass", "Resolve method", "ObjectAllocation",
    "clock_gettime", "futex_wait", "SetPriority", "ReadParcel", "WriteParcel", "unmarshall"}},
  [L_RT_ROOT] = {"gfx", {
    "DrawFrame", "DrawFrames", "queueBuffer", "dequeueBuffer", "RenderThreadImpl::PostFrameCallback",
    "destroyHardwareResources", "trimMemory", "flush commands", "ThreadedRenderer::setSurface",
    "CanvasContext::prepareTree", "GPU completion", "Frame timeline", "hwuiTask:upload"}},
  [L_RT_MID] = {"gfx", {
    "syncFrameState", "prepareTree", "flush commands", "eglSwapBuffersWithDamageKHR",
    "Upload texture", "shader compile", "cache miss", "RenderNode::prepareTreeImpl",
    "GrContext::flush", "SkiaOpenGLPipeline::draw", "SkiaVulkanPipeline::draw",
    "renderFrameImpl", "VkQueueSubmit", "queueBuffer", "dequeueBuffer",
    "Texture upload(bitmap) 512x512", "Path tessellation", "Raster op", "Skia SkSL compile",
    "processAllFrameTasks", "drawRenderNode", "RenderPipeline::renderLayers",
    "SkCanvas::drawImageRect", "SkCanvas::drawTextBlob", "Bitmap::allocateHardwareBitmap",
    "AnimatorManager::pushStaging", "TreeInfo::prepareTree", "LayerUpdateQueue::enqueue",
    "swapBuffers", "setPresentTime"}},
  [L_RT_LEAF] = {"gfx", {
    "GrGLGpu::onClear", "GrResourceCache::purge", "vkAllocateMemory", "vkWaitForFences",
    "waitForFence", "Fence wait", "glTexSubImage2D", "GrGLProgramBuilder::finalize",
    "GrOpFlushState::executeDrawsAndUploadsForMeshDrawOp", "SkImage_Lazy::lockTexture",
    "decodeBitmap", "GrDrawingManager::flush", "GrOpsTask::onExecute", "GrGLGpu::draw",
    "vkQueuePresentKHR", "vkAcquireNextImageKHR", "glDrawElements", "glBindTexture",
    "SkStrike::prepareForDrawing", "GrTextBlob::Make", "SkPath::transform", "Lock contention on GrContext",
    "CacheManager::trimMemory", "ShaderCache::store", "EglManager::swapBuffers"}},
  [L_BINDER_ROOT] = {"binder", {
    "binder reply", "binder reply", "binder transaction", "binder transaction async",
    "HIDL::IServiceManager::get::server", "HIDL::IAllocator::allocate::server",
    "binder reply (oneway)", "HwBinder::onTransact"}},
  [L_AIDL] = {"aidl", {NULL}},   /* generated: AIDL::java::<service>::<method>::server */
  [L_CR_ROOT] = {"toplevel", {
    "ThreadControllerImpl::RunTask", "ThreadController::Task", "MessageLoop::RunTask",
    "SequenceManager::DoIdleWork", "Looper.dispatch: android.os.Handler", "ScheduledTasks",
    "TaskQueueManager::ProcessTaskFromWorkQueue", "ProxyMain::BeginMainFrame",
    "WidgetBase::BeginMainFrame", "Scheduler::BeginFrame", "RendererSchedulerImpl::RunTask",
    "NavigationRequest::BeginNavigation", "ThreadControllerImpl::DoWork", "LongTask",
    "ThreadController active", "InputHandlerProxy::HandleInputEvent"}},
  [L_CR_MID] = {"blink", {
    "V8.Execute", "v8.run", "FunctionCall", "EvaluateScript", "v8.compile", "V8.ParseLazy",
    "V8.GC_SCAVENGER", "BlinkGC.AtomicPhase", "Document::updateStyleAndLayout",
    "LocalFrameView::UpdateLifecyclePhases", "PaintController::CommitNewDisplayItems",
    "HTMLDocumentParser::PumpTokenizer", "ParseHTML", "ResourceLoader::DidReceiveResponse",
    "Layout", "UpdateLayoutTree", "Paint", "CompositeLayers", "LayerTreeHost::UpdateLayers",
    "RenderFrameImpl::DidCommitNavigation", "Mojo::Message::Dispatch",
    "SimpleWatcher::OnHandleReady", "IPC::ChannelProxy::Context::OnDispatchMessage",
    "EventDispatch", "TimerFire", "XHRReadyStateChange", "FireAnimationFrame",
    "ScriptedAnimationController::ServiceScriptedAnimations", "PrePaint", "HitTest",
    "InvalidateLayout", "ScheduleStyleRecalculation", "RunMicrotasks",
    "v8.callFunction", "V8.DeoptimizeCode", "V8.OptimizeCode", "V8.CompileLazy",
    "LayoutNG::Layout", "StyleEngine::RecalcStyle", "CSSParserImpl::ParseStyleSheet"}},
  [L_CR_LEAF] = {"v8", {
    "V8.GC_MC_MARK", "V8.GCScavenger", "V8.StackGuard", "ScriptResource::CheckConsumeCache",
    "BlinkGC.IncrementalMarkingStep", "Blink.Layout.UpdateStyleAndLayoutTree",
    "LayoutBlockFlow::UpdateLayout", "SkCanvas::drawText", "base::WaitableEvent::Wait",
    "TimedWait", "V8.GC_MC_SWEEP", "V8.GC_HEAP_EPILOGUE", "V8.ParseFunctionLiteral",
    "V8.CompileIgnition", "V8.RuntimeStats", "v8::Debugger::AsyncTaskRun", "ThreadLocalStorage::Get",
    "PartitionAlloc::Alloc", "PartitionAlloc::Free", "malloc", "LockImpl::Lock",
    "Lock contention on base::Lock", "mojo::Connector::ReadAllAvailableMessages",
    "SharedImageInterface::CreateSharedImage", "cc::PictureLayerImpl::AppendQuads"}},
  [L_IO_ROOT] = {"toplevel", {
    "ThreadControllerImpl::RunTask", "MessagePumpLibevent::OnLibeventNotification",
    "ChannelMojo::OnMessageReceived", "ThreadController active", "NodeChannel::OnChannelMessage",
    "MessagePumpEpoll::OnEpollEvent"}},
  [L_IO_MID] = {"ipc", {
    "Mojo::Message::Dispatch", "NetworkService::OnRequest", "URLLoader::OnReceiveResponse",
    "net::HttpCache::Transaction::DoLoop", "SocketPosix::DoRead", "SocketPosix::DoWrite",
    "IPC::ChannelProxy::Context::OnDispatchMessage", "ResourceScheduler::ScheduleRequest",
    "URLRequestHttpJob::Start", "HttpStreamParser::DoLoop", "SSLClientSocketImpl::DoHandshake",
    "HostResolverManager::Job::Start", "mojo::core::Channel::OnReadComplete",
    "NodeController::OnBroadcast", "ChannelAssociatedGroupController::Accept"}},
  [L_WK_ROOT] = {"toplevel", {
    "ThreadPool_RunTask", "ThreadPool_RunTask", "TaskScheduler_RunTask", "ThreadPool_WorkerLoop",
    "WorkerThread::RunWorker"}},
  [L_WK_MID] = {"disk_cache", {
    "SimpleEntryImpl::ReadData", "Disk cache ReadData", "HistoryBackend::Commit",
    "SQLDatabase::Execute", "ImageDecodeTask", "RasterTask", "TileManager::RunRasterTask",
    "ScriptStreamer::Run", "v8.compile", "BackgroundHTMLParser::Pump",
    "LevelDBDatabase::Write", "PrefService::CommitPendingWrite", "SafeBrowsing::CheckUrl",
    "OptimizationGuide::Fetch", "ImageDecoder::DecodeToYUV", "GpuImageDecodeCache::DecodeImage",
    "V8.ConcurrentMarking", "V8.ConcurrentSweeping", "V8.OptimizeConcurrent",
    "zlib::Inflate", "base::File::Read", "base::File::Write"}},
  [L_SF_ROOT] = {"gfx", {
    "onMessageReceived", "onMessageInvalidate", "onMessageRefresh", "commit", "composite",
    "handleMessageTransaction", "VSYNC-sf", "onCompositionPresented", "setTransactionState"}},
  [L_SF_MID] = {"gfx", {
    "handlePageFlip", "latchBuffer", "doComposition", "prepareFrame", "doDisplayComposition",
    "postComposition", "HwcPresentDisplay", "HwcValidateDisplay", "setUpHWComposer",
    "rebuildLayerStacks", "calculateWorkingSet", "RenderEngine::drawLayers",
    "waitForLastFrame", "Trace GPU Frame Time", "commitTransactions", "updateInputFlinger",
    "computeLayerBounds", "Layer::latchBuffer", "BufferQueueLayer::onFrameAvailable",
    "presentAndGetReleaseFences", "chooseCompositionStrategy", "finishFrame"}},
  [L_SF_LEAF] = {"gfx", {
    "HIDL::IComposerClient::executeCommands_2_2::client",
    "HIDL::IComposerClient::getReleaseFences::client", "acquireFence", "waitForever",
    "Fence wait", "binder transaction", "queueBuffer", "dequeueBuffer",
    "HIDL::IComposerClient::setLayerBuffer::client", "GLESRenderEngine::drawLayers",
    "SkiaGLRenderEngine::drawLayers", "gralloc::lock", "gralloc::unlock", "ion_alloc",
    "Lock contention on mStateLock"}},
  [L_GC_ROOT] = {"art", {
    "CollectorTransition", "Concurrent copying GC", "Background concurrent copying GC",
    "young concurrent copying GC", "Trim", "HeapTaskDaemon", "FinalizerDaemon",
    "ReferenceQueueDaemon", "Jit thread pool worker: compile", "JIT compiling"}},
  [L_GC_MID] = {"art", {
    "ProcessMarkStack", "MarkingPhase", "CopyingPhase", "ReclaimPhase", "ThreadFlip",
    "ScanImmuneSpaces", "VisitRoots", "SweepSystemWeaks", "ScanObjects",
    "ProcessReferences", "ClearSoftReferences", "madvise", "FlipThreadRoots",
    "GrayAllDirtyImmuneObjects", "RecordFree", "SweepAllocSpace", "CompileMethod",
    "ArtMethod::Invoke", "FinalizerDaemon finalize", "ClearWhiteReferences"}},
};

/* AIDL::java::<service>::<method>::server names for binder threads. */
static const char *const aidl_svc[] = {"IPackageManager", "IActivityManager", "IWindowManager",
                                       "IAudioService", "IPowerManager", "ISurfaceComposer",
                                       "IContentProvider", "IAlarmManager"};
static const char *const aidl_method[] = {"getPackageInfo", "getApplicationInfo",
                                          "queryIntentActivities", "getRunningAppProcesses",
                                          "broadcastIntent", "getServiceInfo", "isInteractive",
                                          "getStreamVolume", "query"};

typedef struct vids {
  int n;
  uint32_t ids[VMAX];
  uint32_t category;
} vids;

static void intern_vocab(rt_strpool *sp, vids *out) {
  for (int l = 0; l < L_COUNT; l++) {
    vids *v = &out[l];
    v->category = rt_str_intern(sp, vocab[l].category, strlen(vocab[l].category));
    v->n = 0;
    if (l == L_AIDL) {
      /* 8 × 9 = 72 combinations, every third one kept: realistic variety
       * without every service offering every method. */
      int k = 0;
      for (size_t s = 0; s < sizeof aidl_svc / sizeof *aidl_svc; s++)
        for (size_t m = 0; m < sizeof aidl_method / sizeof *aidl_method; m++, k++) {
          if (k % 3 && k > 8) continue;
          char buf[128];
          int len = snprintf(buf, sizeof buf, "AIDL::java::%s::%s::server", aidl_svc[s],
                             aidl_method[m]);
          v->ids[v->n++] = rt_str_intern(sp, buf, (size_t)len);
        }
      continue;
    }
    for (int i = 0; i < VMAX && vocab[l].names[i]; i++)
      v->ids[v->n++] = rt_str_intern(sp, vocab[l].names[i], strlen(vocab[l].names[i]));
  }
}

/* ---- processes and threads ----------------------------------------------- */

typedef enum kind { K_UI, K_RENDER, K_BINDER, K_GC, K_CR_MAIN, K_CR_IO, K_CR_WORKER, K_SF } kind;

typedef struct kind_def {
  int root, mid, leaf;       /* vocabulary lists */
  double dur_lo, dur_hi;     /* root duration range, ns (log-uniform) */
  double gap_lo, gap_hi;     /* idle time after a root */
  int priority;              /* sched priority (lower = more important) */
  int hot;                   /* runs on big cores more often */
} kind_def;

static const kind_def kinds[] = {
  [K_UI] = {L_UI_ROOT, L_UI_MID, L_AND_LEAF, 200e3, 16e6, 300e3, 16e6, 110, 1},
  [K_RENDER] = {L_RT_ROOT, L_RT_MID, L_RT_LEAF, 150e3, 12e6, 500e3, 16e6, 110, 1},
  [K_BINDER] = {L_BINDER_ROOT, L_AIDL, L_AND_LEAF, 20e3, 3e6, 2e6, 80e6, 120, 0},
  [K_GC] = {L_GC_ROOT, L_GC_MID, L_AND_LEAF, 500e3, 30e6, 5e6, 200e6, 124, 0},
  [K_CR_MAIN] = {L_CR_ROOT, L_CR_MID, L_CR_LEAF, 30e3, 20e6, 50e3, 10e6, 112, 1},
  [K_CR_IO] = {L_IO_ROOT, L_IO_MID, L_CR_LEAF, 10e3, 1e6, 50e3, 8e6, 112, 0},
  [K_CR_WORKER] = {L_WK_ROOT, L_WK_MID, L_CR_LEAF, 50e3, 20e6, 200e3, 50e6, 120, 0},
  [K_SF] = {L_SF_ROOT, L_SF_MID, L_SF_LEAF, 300e3, 8e6, 2e6, 16e6, 98, 1},
};

typedef struct proc_def {
  int pid;
  const char *name;
} proc_def;

static const proc_def procs[] = {
  {612, "/system/bin/surfaceflinger"},
  {1453, "system_server"},
  {2011, "com.android.systemui"},
  {2380, "com.google.android.apps.nexuslauncher"},
  {7802, "com.android.chrome"},
  {7855, "com.android.chrome:privileged_process0"},
  {7901, "com.android.chrome:sandboxed_process0:org.chromium.content.app.SandboxedProcessService0:0"},
  {2204, "com.google.android.gms.persistent"},
  {598, "/vendor/bin/hw/android.hardware.graphics.composer@2.4-service"},
  {9120, "com.google.android.apps.maps"},
  {880, "/system/bin/cameraserver"},
  {911, "media.codec"},
};
enum { NPROCS = sizeof procs / sizeof *procs };

typedef struct thread_def {
  int upid;
  int tid_offset;   /* tid = pid + offset; 0 is the process's main thread */
  kind k;
  const char *name;
} thread_def;

static const thread_def threads[] = {
  {0, 0, K_SF, "surfaceflinger"}, {0, 14, K_RENDER, "RenderEngine"},
  {0, 21, K_BINDER, "binder:612_1"}, {0, 22, K_BINDER, "binder:612_2"},
  {0, 35, K_BINDER, "binder:612_3"}, {0, 9, K_SF, "app"},
  {1, 0, K_UI, "system_server"}, {1, 31, K_UI, "android.display"},
  {1, 32, K_UI, "android.anim"}, {1, 12, K_BINDER, "binder:1453_1"},
  {1, 13, K_BINDER, "binder:1453_2"}, {1, 57, K_BINDER, "binder:1453_3"},
  {1, 88, K_BINDER, "binder:1453_4"}, {1, 140, K_BINDER, "binder:1453_5"},
  {1, 8, K_GC, "HeapTaskDaemon"}, {1, 44, K_BINDER, "InputDispatcher"},
  {2, 0, K_UI, "ndroid.systemui"}, {2, 41, K_RENDER, "RenderThread"},
  {2, 42, K_RENDER, "hwuiTask0"}, {2, 11, K_BINDER, "binder:2011_1"},
  {2, 12, K_BINDER, "binder:2011_2"}, {2, 7, K_GC, "HeapTaskDaemon"},
  {3, 0, K_UI, "s.nexuslauncher"}, {3, 38, K_RENDER, "RenderThread"},
  {3, 10, K_BINDER, "binder:2380_1"}, {3, 6, K_GC, "HeapTaskDaemon"},
  {3, 5, K_GC, "Jit thread pool"},
  {4, 0, K_CR_MAIN, "CrBrowserMain"}, {4, 33, K_CR_IO, "Chrome_IOThread"},
  {4, 40, K_CR_WORKER, "ThreadPoolForegroundWorker"},
  {4, 41, K_CR_WORKER, "ThreadPoolForegroundWorker"},
  {4, 45, K_CR_WORKER, "ThreadPoolForegroundWorker"}, {4, 61, K_RENDER, "RenderThread"},
  {4, 47, K_CR_WORKER, "ThreadPoolBackgroundWorker"},
  {4, 48, K_CR_WORKER, "ThreadPoolBackgroundWorker"},
  {5, 0, K_CR_MAIN, "CrGpuMain"}, {5, 19, K_CR_IO, "Chrome_ChildIOThread"},
  {5, 27, K_CR_MAIN, "VizCompositorThread"},
  {6, 0, K_CR_MAIN, "CrRendererMain"}, {6, 16, K_CR_IO, "Chrome_ChildIOThread"},
  {6, 22, K_CR_MAIN, "Compositor"}, {6, 24, K_CR_WORKER, "ThreadPoolForegroundWorker"},
  {6, 25, K_CR_WORKER, "ThreadPoolForegroundWorker"}, {6, 30, K_CR_WORKER, "Media"},
  {7, 0, K_UI, "gms.persistent"}, {7, 15, K_BINDER, "binder:2204_1"},
  {7, 16, K_BINDER, "binder:2204_2"}, {7, 9, K_GC, "HeapTaskDaemon"},
  {7, 52, K_CR_WORKER, "pool-3-thread-1"},
  {8, 0, K_BINDER, "composer@2.4-se"}, {8, 4, K_BINDER, "binder:598_1"},
  {9, 0, K_UI, "roid.apps.maps"}, {9, 48, K_RENDER, "RenderThread"},
  {9, 49, K_RENDER, "hwuiTask0"}, {9, 50, K_RENDER, "hwuiTask1"},
  {9, 77, K_RENDER, "GLThread 77"}, {9, 13, K_BINDER, "binder:9120_1"},
  {9, 14, K_BINDER, "binder:9120_2"}, {9, 8, K_GC, "HeapTaskDaemon"},
  {9, 10, K_GC, "FinalizerDaemon"},
  {10, 0, K_BINDER, "cameraserver"}, {10, 3, K_BINDER, "binder:880_1"},
  {11, 0, K_BINDER, "media.codec"}, {11, 2, K_BINDER, "binder:911_1"},
};
enum { NTHREADS = sizeof threads / sizeof *threads };
_Static_assert(NTHREADS == 64, "the sample trace has 64 threads");

/* ---- slices ------------------------------------------------------------------ */

enum { MAX_DEPTH = 30, MAX_KIDS = 12 };

typedef struct slice_gen {
  rng r;
  rt_table_builder *b;
  const vids *v;
  int64_t n, count;
} slice_gen;

/* Picks from a list with a quadratic skew toward its first names. */
static uint32_t pick_name(slice_gen *g, const vids *l) {
  double u = rng_unit(&g->r);
  return l->ids[(int)(u * u * l->n)];
}

/* Probability that a node at a depth has children, and the mean number of
 * extra children beyond one: frames are bushy near the root and thin out,
 * which keeps most slices above depth 10. */
static const double p_kids[MAX_DEPTH + 1] = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.33, 0.27, 0.22,
                                             0.18, 0.15, 0.12, 0.1, 0.08};

static int kid_count(slice_gen *g, int depth) {
  if (rng_unit(&g->r) >= p_kids[depth]) return 0;
  double extra_mean = depth < 2 ? 2.0 : depth < 5 ? 0.9 : 0.3;
  int k = 1 + (int)(-log(1.0 - rng_unit(&g->r)) * extra_mean);
  return k > MAX_KIDS ? MAX_KIDS : k;
}

/* Emits the slice [ts, ts+dur) and then its subtree, depth first, until the
 * budget of slices is used up. Nodes above chain_depth continue a deep call
 * chain (one child each, sometimes two). */
static void gen_subtree(slice_gen *g, const kind_def *k, int track, int64_t parent, int64_t ts,
                        int64_t dur, int depth, int chain_depth) {
  int64_t id = g->count++;
  const vids *l = depth == 0 ? &g->v[k->root]
                  : depth < 4 || rng_unit(&g->r) < 0.3 ? &g->v[k->mid]
                                                        : &g->v[k->leaf];
  rt_tb_append_i64(g->b, 0, id);
  rt_tb_append_i64(g->b, 1, ts);
  rt_tb_append_i64(g->b, 2, dur);
  rt_tb_append_i64(g->b, 3, track);
  if (parent < 0) rt_tb_append_null(g->b, 4);
  else rt_tb_append_i64(g->b, 4, parent);
  rt_tb_append_i64(g->b, 5, depth);
  rt_tb_append_str(g->b, 6, pick_name(g, l));
  rt_tb_append_str(g->b, 7, l->category);

  if (depth >= MAX_DEPTH) return;
  int kids = depth < chain_depth ? 1 + (rng_unit(&g->r) < 0.15) : kid_count(g, depth);
  /* Each child needs room: at least ~2 µs of parent per child. */
  if (kids > dur / 2000) kids = (int)(dur / 2000);
  if (kids <= 0) return;

  /* Children cover 35–95% of the parent (85–99% along a chain, so that
   * 30 levels still have room), split by random weights; the rest
   * is gaps before, between and after them. Integer division only rounds
   * down, so the children always fit. */
  int in_chain = depth < chain_depth;
  double cover = in_chain ? 0.85 + 0.14 * rng_unit(&g->r) : 0.35 + 0.6 * rng_unit(&g->r);
  int64_t total = (int64_t)((double)dur * cover);
  int64_t w[MAX_KIDS], gw[MAX_KIDS + 1], cd[MAX_KIDS], wsum = 0, gsum = 0, used = 0;
  for (int i = 0; i < kids; i++) wsum += w[i] = 1 + (int64_t)rng_below(&g->r, 1000);
  for (int i = 0; i <= kids; i++) gsum += gw[i] = 1 + (int64_t)rng_below(&g->r, 1000);
  for (int i = 0; i < kids; i++) {
    cd[i] = total / wsum * w[i] + total % wsum * w[i] / wsum;
    if (cd[i] < 1) cd[i] = 1;
    used += cd[i];
  }
  int64_t rest = dur - used;   /* >= 0: used <= total + kids <= dur */
  int64_t at = ts + rest / gsum * gw[0] + rest % gsum * gw[0] / gsum;
  for (int i = 0; i < kids && g->count < g->n; i++) {
    /* Only the first child carries a chain on. */
    gen_subtree(g, k, track, id, at, cd[i], depth + 1, i == 0 ? chain_depth : 0);
    at += cd[i] + rest / gsum * gw[i + 1] + rest % gsum * gw[i + 1] / gsum;
  }
}

static const char *const slice_cols[] = {"id", "ts", "dur", "track_id", "parent_id",
                                         "depth", "name", "category"};
static const rt_type slice_types[] = {RT_I64, RT_I64, RT_I64, RT_I64, RT_I64,
                                      RT_U32, RT_STR, RT_STR};

/* Boot-relative start time of the trace, as in real traces. */
#define TRACE_START 72000000000ll

static rt_table *gen_slices(rng *r, const vids *v, int64_t n, int64_t *end_out) {
  slice_gen g = {.r = *r, .v = v, .n = n};
  g.b = rt_tb_new("slice", 8, slice_cols, slice_types);
  if (!g.b) return NULL;
  int64_t next[NTHREADS];
  for (int t = 0; t < NTHREADS; t++)
    next[t] = TRACE_START + (int64_t)rng_below(&g.r, 2000000);
  while (g.count < n) {
    int t = 0;
    for (int i = 1; i < NTHREADS; i++)
      if (next[i] < next[t]) t = i;
    const kind_def *k = &kinds[threads[t].k];
    int64_t dur = rng_loguniform(&g.r, k->dur_lo, k->dur_hi);
    /* 2% of roots are deep call chains (depth 12..30). */
    int chain = rng_unit(&g.r) < 0.02 ? 12 + (int)rng_below(&g.r, MAX_DEPTH - 11) : 0;
    if (chain) dur = dur * 4 + 1000000;   /* deep stacks need room */
    gen_subtree(&g, k, t, -1, next[t], dur, 0, chain);
    next[t] += dur + rng_loguniform(&g.r, k->gap_lo, k->gap_hi);
  }
  int64_t end = TRACE_START + 1;
  for (int t = 0; t < NTHREADS; t++)
    if (next[t] > end) end = next[t];
  *end_out = end;
  *r = g.r;
  return rt_tb_finish(g.b);
}

/* ---- thread and process --------------------------------------------------- */

static rt_table *gen_threads(rt_strpool *sp) {
  static const char *const cols[] = {"utid", "tid", "name", "upid"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_STR, RT_I64};
  rt_table_builder *b = rt_tb_new("thread", 4, cols, types);
  if (!b) return NULL;
  for (int t = 0; t < NTHREADS; t++) {
    rt_tb_append_i64(b, 0, t);
    rt_tb_append_i64(b, 1, procs[threads[t].upid].pid + threads[t].tid_offset);
    rt_tb_append_str(b, 2, rt_str_intern(sp, threads[t].name, strlen(threads[t].name)));
    rt_tb_append_i64(b, 3, threads[t].upid);
  }
  return rt_tb_finish(b);
}

/* trace_processor's thread_track: the track of each thread's slices. The
 * sample gives every thread one track whose id equals its utid, but a
 * query that names threads joins slice.track_id to thread_track.id and
 * reads utid from there, so it also answers right on an imported trace,
 * where track ids and utids differ. */
static rt_table *gen_thread_tracks(rt_strpool *sp) {
  static const char *const cols[] = {"id", "name", "utid"};
  static const rt_type types[] = {RT_I64, RT_STR, RT_I64};
  rt_table_builder *b = rt_tb_new("thread_track", 3, cols, types);
  if (!b) return NULL;
  for (int t = 0; t < NTHREADS; t++) {
    rt_tb_append_i64(b, 0, t);
    rt_tb_append_str(b, 1, rt_str_intern(sp, threads[t].name, strlen(threads[t].name)));
    rt_tb_append_i64(b, 2, t);
  }
  return rt_tb_finish(b);
}

static rt_table *gen_processes(rt_strpool *sp) {
  static const char *const cols[] = {"upid", "pid", "name"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_STR};
  rt_table_builder *b = rt_tb_new("process", 3, cols, types);
  if (!b) return NULL;
  for (int p = 0; p < NPROCS; p++) {
    rt_tb_append_i64(b, 0, p);
    rt_tb_append_i64(b, 1, procs[p].pid);
    rt_tb_append_str(b, 2, rt_str_intern(sp, procs[p].name, strlen(procs[p].name)));
  }
  return rt_tb_finish(b);
}

/* ---- sched ------------------------------------------------------------------ */

enum { NCPUS = 8 };

/* Rows are emitted in ts order by always advancing the CPU that is furthest
 * behind. Each CPU's slots average span * NCPUS / nrows; a run takes
 * 10–170% of a slot, followed half the time by a short idle gap, so the
 * runs cover most of the span and never overlap. */
static rt_table *gen_sched(rng *r, rt_strpool *sp, int64_t nrows, int64_t start, int64_t end) {
  static const char *const cols[] = {"id", "ts", "dur", "cpu", "utid", "end_state", "priority"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_I64, RT_U32, RT_I64, RT_STR, RT_I32};
  static const char *const states[] = {"S", "S", "S", "S", "S", "R", "R", "R+", "D", "DK"};
  enum { NSTATES = sizeof states / sizeof *states };
  rt_table_builder *b = rt_tb_new("sched", 7, cols, types);
  if (!b) return NULL;
  uint32_t state_ids[NSTATES];
  for (int i = 0; i < NSTATES; i++) state_ids[i] = rt_str_intern(sp, states[i], strlen(states[i]));
  int hot[NTHREADS], nhot = 0;
  for (int t = 0; t < NTHREADS; t++)
    if (kinds[threads[t].k].hot) hot[nhot++] = t;

  double slot = nrows > 0 ? (double)(end - start) * NCPUS / (double)nrows : 1;
  int64_t at[NCPUS];
  for (int c = 0; c < NCPUS; c++) at[c] = start + (int64_t)(rng_unit(r) * slot);
  for (int64_t id = 0; id < nrows; id++) {
    int c = 0;
    for (int i = 1; i < NCPUS; i++)
      if (at[i] < at[c]) c = i;
    int64_t dur = 1 + (int64_t)(slot * (0.1 + 1.6 * rng_unit(r)));
    int64_t gap = rng_unit(r) < 0.5 ? (int64_t)(slot * 0.1 * rng_unit(r)) : 0;
    /* Big cores (4-7) mostly run the frame-critical threads. */
    int utid = c >= 4 && rng_unit(r) < 0.6 ? hot[rng_below(r, (uint64_t)nhot)]
                                           : (int)rng_below(r, NTHREADS);
    rt_tb_append_i64(b, 0, id);
    rt_tb_append_i64(b, 1, at[c]);
    rt_tb_append_i64(b, 2, dur);
    rt_tb_append_i64(b, 3, c);
    rt_tb_append_i64(b, 4, utid);
    rt_tb_append_str(b, 5, state_ids[rng_below(r, NSTATES)]);
    rt_tb_append_i64(b, 6, kinds[threads[utid].k].priority);
    at[c] += dur + gap;
  }
  return rt_tb_finish(b);
}

/* ---- cpu_frequency ------------------------------------------------------------ */

/* Little (0-3) and big (4-7) cluster operating points of a 2020s phone, kHz. */
static const int64_t freq_little[] = {300000, 576000, 748800, 998400, 1209600, 1516800, 1804800};
static const int64_t freq_big[] = {652800, 940800, 1344000, 1728000, 2054400, 2419200, 2841600};
enum { NFREQ = 7 };

static rt_table *gen_cpu_frequency(rng *r, int64_t nrows, int64_t start, int64_t end) {
  static const char *const cols[] = {"id", "ts", "dur", "cpu", "freq"};
  static const rt_type types[] = {RT_I64, RT_I64, RT_I64, RT_U32, RT_I64};
  rt_table_builder *b = rt_tb_new("cpu_frequency", 5, cols, types);
  if (!b) return NULL;
  double slot = nrows > 0 ? (double)(end - start) * NCPUS / (double)nrows : 1;
  int64_t at[NCPUS];
  int level[NCPUS];
  for (int c = 0; c < NCPUS; c++) {
    at[c] = start;
    level[c] = (int)rng_below(r, NFREQ);
  }
  for (int64_t id = 0; id < nrows; id++) {
    int c = 0;
    for (int i = 1; i < NCPUS; i++)
      if (at[i] < at[c]) c = i;
    int64_t dur = 1 + (int64_t)(slot * (0.2 + 1.6 * rng_unit(r)));
    /* Governors mostly step one level; sometimes they jump to an end. */
    double u = rng_unit(r);
    int lv = level[c] + (u < 0.4 ? -1 : u < 0.8 ? 1 : 0);
    if (u >= 0.95) lv = u < 0.975 ? 0 : NFREQ - 1;
    level[c] = lv < 0 ? 0 : lv >= NFREQ ? NFREQ - 1 : lv;
    rt_tb_append_i64(b, 0, id);
    rt_tb_append_i64(b, 1, at[c]);
    rt_tb_append_i64(b, 2, dur);
    rt_tb_append_i64(b, 3, c);
    rt_tb_append_i64(b, 4, (c < 4 ? freq_little : freq_big)[level[c]]);
    at[c] += dur;   /* contiguous: the next interval starts here */
  }
  return rt_tb_finish(b);
}

/* ---- entry points --------------------------------------------------------------- */

int rt_sample_trace_seeded(rt_catalog *cat, rt_strpool *sp, int64_t nslices, uint64_t seed,
                           rt_err *err) {
  if (nslices < 0 || nslices > ((int64_t)1 << 30))
    return rt_errorf(err, -1, "SAMPLE TRACE: expected between 0 and %lld slices, not %lld",
                     (long long)1 << 30, (long long)nslices);
  rng r;
  rng_seed(&r, seed);
  vids v[L_COUNT];
  intern_vocab(sp, v);

  /* Build everything first, so a failure leaves the catalog untouched. */
  enum { NT = 6 };
  rt_table *t[NT] = {0};
  int64_t end = 0;
  t[0] = gen_slices(&r, v, nslices, &end);
  t[1] = gen_threads(sp);
  t[2] = gen_processes(sp);
  t[3] = gen_sched(&r, sp, nslices, TRACE_START, end);
  t[4] = gen_cpu_frequency(&r, nslices / 10, TRACE_START, end);
  t[5] = gen_thread_tracks(sp);
  for (int i = 0; i < NT; i++) {
    if (t[i]) continue;
    for (int j = 0; j < NT; j++) rt_table_unref(t[j]);
    return rt_errorf(err, -1, "SAMPLE TRACE: out of memory");
  }
  for (int i = 0; i < NT; i++) rt_catalog_put(cat, t[i]);
  return 1;
}

int rt_sample_trace(rt_catalog *cat, rt_strpool *sp, int64_t nslices, rt_err *err) {
  return rt_sample_trace_seeded(cat, sp, nslices, RT_SAMPLE_SEED, err);
}
