// sinew-ogre: OGRE 1.12 draws a character that OGRE animates and sinew skins.
// SPDX-License-Identifier: MIT
//
// OGRE owns the character as any OGRE game would: a skinned Ogre::Mesh, its Ogre::Skeleton
// and the skeleton's animations, played by an Entity's AnimationState. sinew takes over the
// skinning: a rig made from that mesh and skeleton, one skin with the chosen backend, and
// every frame
//   1. OGRE animates: the AnimationState advances, the Entity's skeleton takes the pose;
//   2. the bones' model-space matrices go to the skin (sinew_skin_set_pose);
//   3. sinew_world_update skins, and sinew writes the result into the vertex buffer of a second
//      mesh, the one OGRE draws (same triangles, no skeleton, a dynamic buffer).
// The bridge is sinew_ogre.h; ogre_character.h builds the OGRE assets from a character sinew's
// importer reads, since the test characters come without .mesh files.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <OgreAnimationState.h>
#include <OgreCamera.h>
#include <OgreEntity.h>
#include <OgreException.h>
#include <OgreHardwarePixelBuffer.h>
#include <OgreImage.h>
#include <OgreLogManager.h>
#include <OgreMaterialManager.h>
#include <OgrePass.h>
#include <OgreRenderTexture.h>
#include <OgreRenderWindow.h>
#include <OgreRoot.h>
#include <OgreSceneManager.h>
#include <OgreSkeletonInstance.h>
#include <OgreSkeletonManager.h>
#include <OgreTechnique.h>
#include <OgreTextureManager.h>
#include <OgreTimer.h>
#include <OgreViewport.h>

#include <sys/stat.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>

extern "C" {
#include "sample_character.h"
#include "sample_options.h"
}

#include "ogre_character.h"
#include "sinew_ogre.h"

namespace {

// The backends the 'b' key cycles through, those this build can run.
const char* const CYCLE[] = {"lbs", "dqs", "ps", "fps"};

// The comparison with OGRE's own software skinning passes within this fraction of the
// character's size (the diagonal of its rest bounding box).
const double CHECK_TOLERANCE = 1e-4;

struct options {
    const char* character = nullptr;
    const char* backend = "lbs";
    uint32_t frames = 0;          // 0: interactive
    const char* out = nullptr;
    uint32_t swap_frame = UINT32_MAX;
    std::string swap_backend;
    uint32_t animation = 0;
    uint32_t width = 640, height = 480;
    bool check = false;
};

// The largest differences between sinew's output and OGRE's software skinning, in positions and
// in (unit) normals.
struct difference {
    double position = 0.0, normal = 0.0;
};

struct app {
    options opt;
    sample_character character = {};
    std::string character_path;
    sinew_world* world = nullptr;
    sinew_rig rig = {0};
    sinew_skin skin = {0};
    std::string last_backend;
    Ogre::Root* root = nullptr;
    Ogre::RenderWindow* window = nullptr;
    Ogre::RenderTarget* target = nullptr;   // the window, or the offscreen texture
    Ogre::SceneManager* scene = nullptr;
    Ogre::Camera* camera = nullptr;
    Ogre::MeshPtr skinned, drawn;
    Ogre::Entity* animated = nullptr;       // never drawn: OGRE's animation of the skeleton
    Ogre::Entity* shown = nullptr;          // drawn: the mesh sinew writes
    Ogre::AnimationState* clip = nullptr;
    std::vector<float> pose;
    float diagonal = 1.0f;
    difference max_difference;              // --check: the largest over all frames
};

void usage(FILE* out)
{
    std::fprintf(out,
        "usage: sinew-ogre [--character PATH] [--backend NAME] [--animation N]\n"
        "                  [--frames N --out DIR [--swap-at FRAME:NAME] [--check] [--size WxH]]\n"
        "\n"
        "OGRE 1.12 draws a character animated by OGRE and skinned by sinew into OGRE's vertex\n"
        "buffer. Without --frames it opens a window: 'b' cycles the backend (lbs, dqs, ps, fps),\n"
        "'q' or Escape quits. With --frames N it renders N frames at 60 per second offscreen\n"
        "(under Xvfb in CI) and writes DIR/sinew-ogre.png and DIR/ogre.log. A missing character\n"
        "file exits 77 (unless SINEW_REQUIRE_DATA=1), and so does a missing X display.\n"
        "\n"
        "  --character PATH  .ini or any file assimp reads (default: the male test character)\n"
        "  --backend NAME    the skin's backend (default lbs)\n"
        "  --animation N     which of the character's clips OGRE plays (default 0)\n"
        "  --frames N        headless: render N frames, then write the PNG and exit\n"
        "  --out DIR         headless: where the PNG and OGRE's log go (made if missing)\n"
        "  --swap-at F:NAME  headless: ask for backend NAME at frame F (sinew_skin_set_backend)\n"
        "  --check           headless, lbs: compare every frame with OGRE's software skinning\n"
        "                    of the same bones and weights; fails above %g of the size\n"
        "  --size WxH        headless image size (default 640x480)\n"
        "  --help            print this and exit\n",
        CHECK_TOLERANCE);
}

int parse_swap(const char* text, options* o)
{
    const char* colon = std::strchr(text, ':');
    if (!colon || !colon[1]) {
        std::fprintf(stderr, "sinew-ogre: --swap-at wants FRAME:NAME, not %s\n", text);
        return 0;
    }
    const std::string frame(text, colon);
    o->swap_backend = colon + 1;
    return sample_parse_u32("--swap-at", frame.c_str(), 0, 1000000, &o->swap_frame);
}

int parse_size(const char* text, options* o)
{
    unsigned w = 0, h = 0;
    char end = 0;
    if (std::sscanf(text, "%ux%u%c", &w, &h, &end) != 2 || w < 16 || h < 16 || w > 8192 || h > 8192) {
        std::fprintf(stderr, "sinew-ogre: --size wants WxH from 16x16 to 8192x8192, not %s\n", text);
        return 0;
    }
    o->width = w;
    o->height = h;
    return 1;
}

// One option at argv[*i]: 1 taken, 0 unknown, -1 bad.
int parse_option(int argc, char** argv, int* i, options* o)
{
    const char* value = nullptr;
    int m;
    if (sample_option_flag(argv, *i, "--check")) {
        o->check = true;
        return 1;
    }
    if ((m = sample_option_value(argc, argv, i, "--character", &value)) != 0) {
        o->character = value;
    } else if ((m = sample_option_value(argc, argv, i, "--backend", &value)) != 0) {
        o->backend = value;
    } else if ((m = sample_option_value(argc, argv, i, "--out", &value)) != 0) {
        o->out = value;
    } else if ((m = sample_option_value(argc, argv, i, "--frames", &value)) != 0) {
        if (m > 0 && !sample_parse_u32("--frames", value, 1, 1000000, &o->frames)) m = -1;
    } else if ((m = sample_option_value(argc, argv, i, "--animation", &value)) != 0) {
        if (m > 0 && !sample_parse_u32("--animation", value, 0, 1000000, &o->animation)) m = -1;
    } else if ((m = sample_option_value(argc, argv, i, "--swap-at", &value)) != 0) {
        if (m > 0 && !parse_swap(value, o)) m = -1;
    } else if ((m = sample_option_value(argc, argv, i, "--size", &value)) != 0) {
        if (m > 0 && !parse_size(value, o)) m = -1;
    }
    return m;
}

// SAMPLE_EXIT_OK when the command line is good; --help is reported as -1.
int parse_options(int argc, char** argv, options* o)
{
    for (int i = 1; i < argc; ++i) {
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            return -1;
        }
        const int m = parse_option(argc, argv, &i, o);
        if (m == 0) std::fprintf(stderr, "sinew-ogre: unknown option %s\n", argv[i]);
        if (m <= 0) return SAMPLE_EXIT_USAGE;
    }
    const char* wrong = nullptr;
    if (o->frames && !o->out) wrong = "--frames needs --out";
    else if (!o->frames && (o->out || o->check || o->swap_frame != UINT32_MAX))
        wrong = "--out, --check and --swap-at are for the headless mode (--frames N)";
    else if (o->check && (std::strcmp(o->backend, "lbs") != 0 || o->swap_frame != UINT32_MAX))
        wrong = "--check compares lbs with OGRE's skinning: no other --backend, no --swap-at";
    if (wrong) std::fprintf(stderr, "sinew-ogre: %s\n", wrong);
    return wrong ? SAMPLE_EXIT_USAGE : SAMPLE_EXIT_OK;
}

int fail(const char* what, sinew_result r)
{
    std::fprintf(stderr, "sinew-ogre: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

// ---------------------------------------------------------------------------------------------
// OGRE: root, render system, window, scene

// The plugins come from OGRE's own folder (found by CMake): nothing is installed or configured
// outside the build tree. The fixed-function GL render system needs no shader library.
void start_ogre(app* a)
{
    Ogre::LogManager* logs = new Ogre::LogManager();
    const std::string log_path = a->opt.out ? std::string(a->opt.out) + "/ogre.log" : "ogre.log";
    logs->createLog(log_path, true, false, a->opt.out == nullptr);
    a->root = new Ogre::Root("", "", "");
    a->root->loadPlugin(SINEW_OGRE_PLUGIN_DIR "/RenderSystem_GL");
    a->root->loadPlugin(SINEW_OGRE_PLUGIN_DIR "/Codec_STBI");
    Ogre::RenderSystem* gl = a->root->getRenderSystemByName("OpenGL Rendering Subsystem");
    if (!gl)
        OGRE_EXCEPT(Ogre::Exception::ERR_NOT_IMPLEMENTED, "no OpenGL render system", "start_ogre");
    a->root->setRenderSystem(gl);
    a->root->initialise(false);

    const bool headless = a->opt.frames > 0;
    Ogre::NameValuePairList misc;
    misc["hidden"] = headless ? "true" : "false";
    misc["vsync"] = headless ? "false" : "true";
    a->window = a->root->createRenderWindow("sinew-ogre", headless ? 64 : 960, headless ? 64 : 720,
                                            false, &misc);
    a->target = a->window;
    if (headless) {
        // Offscreen: a texture the frames are drawn into and the PNG is read from.
        Ogre::TexturePtr texture = Ogre::TextureManager::getSingleton().createManual(
            "sinew-ogre/frame", Ogre::RGN_DEFAULT, Ogre::TEX_TYPE_2D, a->opt.width,
            a->opt.height, 0, Ogre::PF_BYTE_RGB, Ogre::TU_RENDERTARGET);
        a->target = texture->getBuffer()->getRenderTarget();
    }
}

// Which axis is up and which one the camera looks along: a character is tallest along its up
// axis and thinnest front to back.
void axes(const Ogre::Vector3& size, int* up, int* depth)
{
    *up = 0;
    *depth = 0;
    for (int k = 1; k < 3; ++k) {
        if (size[k] > size[*up]) *up = k;
        if (size[k] < size[*depth]) *depth = k;
    }
    if (*depth == *up) *depth = (*up + 1) % 3;
}

// A camera framing the rest pose, a light from the camera's side and a plain skin material.
void create_scene(app* a, const Ogre::AxisAlignedBox& box)
{
    a->scene = a->root->createSceneManager();
    a->scene->setAmbientLight(Ogre::ColourValue(0.35f, 0.35f, 0.38f));
    int up, depth;
    axes(box.getSize(), &up, &depth);
    Ogre::Vector3 up_axis = Ogre::Vector3::ZERO, view_axis = Ogre::Vector3::ZERO;
    up_axis[up] = 1;
    view_axis[depth] = 1;  // the camera stands on the -depth side, the side the male faces

    a->camera = a->scene->createCamera("camera");
    a->camera->setNearClipDistance(0.01f * a->diagonal);
    a->camera->setFarClipDistance(20.0f * a->diagonal);
    a->camera->setAutoAspectRatio(true);
    Ogre::SceneNode* eye = a->scene->getRootSceneNode()->createChildSceneNode();
    eye->setFixedYawAxis(true, up_axis);
    eye->setPosition(box.getCenter() - view_axis * 1.6f * box.getSize()[up]);
    eye->lookAt(box.getCenter(), Ogre::Node::TS_WORLD);
    eye->attachObject(a->camera);

    Ogre::Light* light = a->scene->createLight("key");
    light->setType(Ogre::Light::LT_DIRECTIONAL);
    light->setDiffuseColour(Ogre::ColourValue(0.8f, 0.8f, 0.75f));
    Ogre::SceneNode* lamp = a->scene->getRootSceneNode()->createChildSceneNode();
    lamp->setDirection(view_axis - 0.5f * up_axis, Ogre::Node::TS_WORLD);
    lamp->attachObject(light);

    Ogre::MaterialPtr skin = Ogre::MaterialManager::getSingleton().create("sinew-ogre/skin",
                                                                           Ogre::RGN_DEFAULT);
    Ogre::Pass* pass = skin->getTechnique(0)->getPass(0);
    pass->setLightingEnabled(true);
    pass->setAmbient(0.8f, 0.62f, 0.52f);
    pass->setDiffuse(0.85f, 0.66f, 0.56f, 1.0f);
    pass->setCullingMode(Ogre::CULL_NONE);  // open meshes (a glTF strip) show from both sides

    Ogre::Viewport* viewport = a->target->addViewport(a->camera);
    viewport->setBackgroundColour(Ogre::ColourValue(0.16f, 0.18f, 0.22f));
}

// ---------------------------------------------------------------------------------------------
// The character: OGRE's assets and sinew's rig and skin

// Weights for OGRE's mesh come from a first sinew rig: the importer's weights reduced to the 4
// largest (OGRE's limit), or sinew's automatic weights (4 influences) for a character without.
sinew_result create_ogre_assets(app* a)
{
    sinew_rig_desc desc = a->character.rig;
    desc.max_influences = 4;
    sinew_rig imported;
    sinew_result r = sinew_rig_create(a->world, &desc, &imported);
    if (r != SINEW_OK) return r;
    Ogre::SkeletonPtr skeleton =
        Ogre::SkeletonManager::getSingleton().create("character", Ogre::RGN_DEFAULT, true);
    const std::vector<std::string> clips = ogre_build_skeleton(
        desc.skeleton, a->character.animations, a->character.animation_count, skeleton.get());
    a->skinned = ogre_build_skinned_mesh("character", a->world, imported, skeleton, "sinew-ogre/skin");
    a->drawn = ogre_build_drawn_mesh("character drawn by sinew", *a->skinned);
    sinew_rig_destroy(a->world, imported);
    if (clips.empty() || a->opt.animation >= clips.size()) {
        std::fprintf(stderr, "sinew-ogre: %s has %zu animations, no animation %u\n",
                     a->character_path.c_str(), clips.size(), a->opt.animation);
        return SINEW_ERROR_INVALID_ARGUMENT;
    }
    a->animated = a->scene->createEntity(a->skinned);
    // OGRE's own skinning runs only for --check: the Entity is never drawn.
    if (a->opt.check) a->animated->addSoftwareAnimationRequest(true);
    a->clip = a->animated->getAnimationState(clips[a->opt.animation]);
    a->clip->setEnabled(true);
    a->clip->setLoop(true);
    a->shown = a->scene->createEntity(a->drawn);
    a->scene->getRootSceneNode()->createChildSceneNode()->attachObject(a->shown);
    return SINEW_OK;
}

// The rig from OGRE's mesh and skeleton, and the character's skin with the chosen backend. A
// simulation mesh the character brings (the physics backends' coarse mesh) is passed along,
// as an engine would keep one beside its render mesh.
sinew_result create_skin(app* a)
{
    sinew_ogre_rig_source source;
    sinew_result r = sinew_ogre_describe_rig(*a->skinned, &source);
    if (r != SINEW_OK) return r;
    source.desc.simulation_mesh = a->character.rig.simulation_mesh;
    if ((r = sinew_rig_create(a->world, &source.desc, &a->rig)) != SINEW_OK) return r;
    sinew_skin_desc skin = SINEW_SKIN_DESC_INIT;
    skin.rig = a->rig;
    skin.backend = a->opt.backend;
    if ((r = sinew_world_add_skin(a->world, &skin, &a->skin)) != SINEW_OK) return r;
    a->last_backend = a->opt.backend;
    return SINEW_OK;
}

// ---------------------------------------------------------------------------------------------
// One frame

// Steps 1 and 2: OGRE animates the skeleton, its bones become the skin's pose. With --check
// the Entity's own update also skins the mesh in software, for the comparison.
sinew_result animate(app* a, float dt)
{
    a->clip->addTime(dt);
    if (a->opt.check) {
        a->animated->_updateAnimation();
    } else {
        a->animated->getSkeleton()->setAnimationState(*a->animated->getAllAnimationStates());
    }
    sinew_ogre_read_pose(*a->animated->getSkeleton(), &a->pose);
    return sinew_ogre_set_pose(a->world, a->skin, a->pose);
}

// The largest coordinate difference between the float3 of `ours` and the `semantic` element of
// OGRE's blended vertices.
double largest_difference(const Ogre::VertexData& blended, Ogre::VertexElementSemantic semantic,
                          const std::vector<float>& ours)
{
    const Ogre::VertexElement* element = blended.vertexDeclaration->findElementBySemantic(semantic);
    const Ogre::HardwareVertexBufferSharedPtr& buffer =
        blended.vertexBufferBinding->getBuffer(element->getSource());
    Ogre::HardwareBufferLockGuard lock(buffer, Ogre::HardwareBuffer::HBL_READ_ONLY);
    double largest = 0.0;
    for (size_t v = 0; v < blended.vertexCount; ++v) {
        float* theirs;
        element->baseVertexPointerToElement(static_cast<char*>(lock.pData) + v * buffer->getVertexSize(),
                                            &theirs);
        for (int c = 0; c < 3; ++c)
            largest = std::max(largest, (double)std::fabs(ours[3 * v + c] - theirs[c]));
    }
    return largest;
}

difference compare_with_ogre(const app* a)
{
    const Ogre::VertexData* blended = a->animated->_getSkelAnimVertexData();
    std::vector<float> positions(3 * blended->vertexCount), normals(3 * blended->vertexCount);
    sinew_output_desc output = SINEW_OUTPUT_DESC_INIT;
    output.vertex_capacity = (uint32_t)blended->vertexCount;
    output.positions = positions.data();
    output.normals = normals.data();
    difference d;
    if (sinew_skin_read_output(a->world, a->skin, &output) != SINEW_OK) {
        d.position = d.normal = INFINITY;
        return d;
    }
    d.position = largest_difference(*blended, Ogre::VES_POSITION, positions);
    d.normal = largest_difference(*blended, Ogre::VES_NORMAL, normals);
    return d;
}

// Reports a backend that took over since the last frame.
void note_backend(app* a, uint32_t frame)
{
    const char* now = sinew_skin_backend(a->world, a->skin);
    if (now && a->last_backend != now) {
        std::printf("sinew-ogre: frame %u: %s took over from %s\n", frame, now, a->last_backend.c_str());
        a->last_backend = now;
    }
}

// Steps 1 to 3 and the draw.
sinew_result frame(app* a, uint32_t index, float dt)
{
    sinew_result r = animate(a, dt);
    if (r == SINEW_OK) r = sinew_world_update(a->world, dt);
    if (r != SINEW_OK) return r;
    note_backend(a, index);
    if (a->opt.check) {
        const difference d = compare_with_ogre(a);
        a->max_difference.position = std::max(a->max_difference.position, d.position);
        a->max_difference.normal = std::max(a->max_difference.normal, d.normal);
    }
    // The skin's output goes straight into the buffer OGRE draws.
    r = sinew_ogre_write_vertices(a->world, a->skin, *a->drawn->sharedVertexData);
    if (r != SINEW_OK) return r;
    a->root->renderOneFrame(dt);
    return SINEW_OK;
}

// Asks for the backend after the current one in CYCLE that this build can run; one swap at
// a time.
void cycle_backend(app* a)
{
    if (sinew_skin_swap_status(a->world, a->skin) == SINEW_ERROR_BUSY) {
        std::printf("sinew-ogre: the last backend asked for is still being prepared\n");
        return;
    }
    const size_t n = sizeof CYCLE / sizeof *CYCLE;
    size_t at = 0;
    while (at < n && a->last_backend != CYCLE[at]) ++at;
    for (size_t k = 1; k <= n; ++k) {
        const char* next = CYCLE[(at + k) % n];
        if (sinew_world_probe_backend(a->world, next) != SINEW_OK) continue;
        const sinew_result r = sinew_skin_set_backend(a->world, a->skin, next, nullptr, 0);
        std::printf("sinew-ogre: asked for %s: %s\n", next, sinew_result_string(r));
        return;
    }
}

// ---------------------------------------------------------------------------------------------
// The two modes

// Key presses and the window manager's close button, read from the window's X11 connection
// (OGRE 1.12's GLX window has no input of its own). 0: go on, 1: quit.
int pump_events(app* a, Display* display, Atom close)
{
    while (XPending(display)) {
        XEvent event;
        XNextEvent(display, &event);
        if (event.type == ClientMessage && (Atom)event.xclient.data.l[0] == close) return 1;
        if (event.type == ConfigureNotify) a->window->windowMovedOrResized();
        if (event.type != KeyPress) continue;
        KeySym key;
        char text[8] = {0};
        XLookupString(&event.xkey, text, sizeof text - 1, &key, nullptr);
        if (key == XK_Escape || text[0] == 'q') return 1;
        if (text[0] == 'b') cycle_backend(a);
    }
    return 0;
}

int run_interactive(app* a)
{
    Display* display = nullptr;
    Window window = 0;
    a->window->getCustomAttribute("XDISPLAY", &display);
    a->window->getCustomAttribute("WINDOW", &window);
    XSelectInput(display, window, KeyPressMask | StructureNotifyMask);
    Atom close = XInternAtom(display, "WM_DELETE_WINDOW", False);
    XSetWMProtocols(display, window, &close, 1);
    std::printf("sinew-ogre: %s with %s; 'b' cycles the backend, 'q' quits\n",
                a->character_path.c_str(), a->opt.backend);
    Ogre::Timer timer;
    for (uint32_t index = 0; !pump_events(a, display, close) && !a->window->isClosed(); ++index) {
        // Real time between frames, at most 1/10 s after a stall.
        const float dt = std::min(timer.getMicroseconds() * 1e-6f, 0.1f);
        timer.reset();
        const sinew_result r = frame(a, index, dt);
        if (r != SINEW_OK) return fail("a frame", r);
    }
    return SAMPLE_EXIT_OK;
}

// Reads the PNG back through OGRE's codec and counts the pixels that differ from the
// background: 0 means nothing was drawn.
size_t drawn_pixels(const std::string& path, const Ogre::ColourValue& background)
{
    Ogre::Image image;
    image.load(Ogre::Root::openFileStream(path), "png");
    size_t drawn = 0;
    for (uint32_t y = 0; y < image.getHeight(); ++y)
        for (uint32_t x = 0; x < image.getWidth(); ++x) {
            const Ogre::ColourValue c = image.getColourAt(x, y, 0);
            drawn += std::fabs(c.r - background.r) + std::fabs(c.g - background.g) +
                         std::fabs(c.b - background.b) > 0.02f;
        }
    return drawn;
}

int run_headless(app* a)
{
    const float dt = (float)SAMPLE_DEFAULT_DT;
    for (uint32_t index = 0; index < a->opt.frames; ++index) {
        if (index == a->opt.swap_frame) {
            const sinew_result r = sinew_skin_set_backend(a->world, a->skin, a->opt.swap_backend.c_str(),
                                                          nullptr, 0);
            if (r != SINEW_OK) return fail("sinew_skin_set_backend", r);
            std::printf("sinew-ogre: frame %u: asked for %s\n", index, a->opt.swap_backend.c_str());
        }
        const sinew_result r = frame(a, index, dt);
        if (r != SINEW_OK) return fail("a frame", r);
    }
    // A swap still preparing when the frames run out is waited for, and one more frame shows
    // the new backend.
    if (sinew_skin_swap_status(a->world, a->skin) == SINEW_ERROR_BUSY) {
        sinew_result r = sinew_skin_wait_swap(a->world, a->skin);
        if (r == SINEW_OK) r = frame(a, a->opt.frames, dt);
        if (r != SINEW_OK) return fail("finishing the swap", r);
    }
    const std::string path = std::string(a->opt.out) + "/sinew-ogre.png";
    a->target->writeContentsToFile(path);
    const size_t drawn = drawn_pixels(path, a->target->getViewport(0)->getBackgroundColour());
    std::printf("sinew-ogre: %u frames of %s with %s, wrote %s (%ux%u, %zu pixels drawn)\n",
                a->opt.frames, a->character_path.c_str(), a->last_backend.c_str(), path.c_str(),
                a->opt.width, a->opt.height, drawn);
    int code = drawn > 0 ? SAMPLE_EXIT_OK : SAMPLE_EXIT_FAILURE;
    if (a->opt.check) {
        const double relative = a->max_difference.position / a->diagonal;
        std::printf("sinew-ogre: lbs against OGRE's software skinning: largest difference %.3g "
                    "(%.3g of the size %.4g; passes below %g), normals %.3g\n",
                    a->max_difference.position, relative, a->diagonal, CHECK_TOLERANCE,
                    a->max_difference.normal);
        if (!(relative < CHECK_TOLERANCE)) code = SAMPLE_EXIT_FAILURE;
    }
    return code;
}

// ---------------------------------------------------------------------------------------------

// Everything that needs the world and OGRE; OGRE reports its failures by exceptions.
int run(app* a)
{
    sinew_world_desc world_desc = SINEW_WORLD_DESC_INIT;
    sinew_result r = sinew_world_create(&world_desc, &a->world);
    if (r != SINEW_OK) return fail("sinew_world_create", r);
    start_ogre(a);
    const float* p = a->character.rig.render_mesh.positions;
    Ogre::AxisAlignedBox box;
    for (uint32_t v = 0; v < a->character.rig.render_mesh.vertex_count; ++v)
        box.merge(Ogre::Vector3(p[3 * v], p[3 * v + 1], p[3 * v + 2]));
    a->diagonal = box.getSize().length();
    create_scene(a, box);
    if ((r = create_ogre_assets(a)) != SINEW_OK) return fail("building OGRE's character", r);
    if ((r = create_skin(a)) != SINEW_OK) return fail("creating the skin", r);
    return a->opt.frames ? run_headless(a) : run_interactive(a);
}

// `path` and the folders above it, as `mkdir -p` would; false (errno set) on failure.
bool make_folders(const std::string& path)
{
    for (size_t slash = path.find('/', 1); ; slash = path.find('/', slash + 1)) {
        const std::string prefix = path.substr(0, slash);
        if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) return false;
        if (slash == std::string::npos) return true;
    }
}

// The male test character unless --character names another.
int load_character(app* a)
{
    a->character_path = a->opt.character
        ? a->opt.character
        : std::string(sinew_import_data_dir()) + "/characters/male/male.ini";
    const sinew_result r = sample_character_load(a->character_path.c_str(), nullptr, &a->character);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        std::fprintf(stderr, "sinew-ogre: skipped, %s is missing (SINEW_REQUIRE_DATA=1 makes this "
                     "an error)\n", a->character_path.c_str());
        return SAMPLE_EXIT_SKIP;
    }
    return r == SINEW_OK ? SAMPLE_EXIT_OK : fail("loading the character", r);
}

// OGRE goes first (its entities and buffers), then the world, then the character's arrays.
void shut_down(app* a)
{
    a->skinned.reset();
    a->drawn.reset();
    delete a->root;
    delete Ogre::LogManager::getSingletonPtr();
    sinew_world_destroy(a->world);
    sample_character_free(&a->character);
}

} // namespace

int main(int argc, char** argv)
{
    app a;
    int code = parse_options(argc, argv, &a.opt);
    if (code != SAMPLE_EXIT_OK) return code < 0 ? SAMPLE_EXIT_OK : code;
    if (a.opt.out && !make_folders(a.opt.out)) {
        std::fprintf(stderr, "sinew-ogre: cannot make %s: %s\n", a.opt.out, std::strerror(errno));
        return SAMPLE_EXIT_FAILURE;
    }
    if ((code = load_character(&a)) != SAMPLE_EXIT_OK) return code;
    // OGRE's GL render system draws through GLX, also offscreen: no X server, nothing to do.
    const char* display = std::getenv("DISPLAY");
    if (!display || !display[0]) {
        std::fprintf(stderr, "sinew-ogre: skipped, no X display (headless: run under xvfb-run)\n");
        sample_character_free(&a.character);
        return SAMPLE_EXIT_SKIP;
    }
    try {
        code = run(&a);
    } catch (const Ogre::Exception& e) {
        std::fprintf(stderr, "sinew-ogre: OGRE: %s\n", e.getDescription().c_str());
        code = SAMPLE_EXIT_FAILURE;
    }
    shut_down(&a);
    return code;
}
