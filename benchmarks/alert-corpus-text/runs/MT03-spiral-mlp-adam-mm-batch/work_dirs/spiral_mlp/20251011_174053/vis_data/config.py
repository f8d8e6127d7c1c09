model = dict(type='SpiralMLP')
optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.002))
param_scheduler = []
train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
